package etcd

import (
	"strings"
	"testing"
)

// FuzzMembers: any --db string gives a size from 1 to 9 or an error that
// names the string's problem, never a panic.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{"etcd", "etcd?members=5", "etcd?members=0", "etcd?size=3", "etcd?members=%zz", "etcd?members=1&members=2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, db string) {
		n, err := members(db)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "etcd: ") {
				t.Fatalf("%q: error %q does not say it is etcd's", db, err)
			}
			return
		}
		if n < 1 || n > 9 {
			t.Fatalf("%q: %d members", db, n)
		}
	})
}
