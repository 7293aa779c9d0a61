package mariadb_test

import (
	"testing"

	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/internal/dbtest"
	"github.com/hyperiso/hyperiso/collect/workload"
)

// TestPredicate: the predicate workload at SERIALIZABLE satisfies SER
// (dbtest.Predicate asserts it).
func TestPredicate(t *testing.T) {
	dbtest.Predicate(t, func() collect.Store { return open(t) }, collect.Serializable, func(c *workload.Config) {
		c.Sessions, c.Txns, c.Keys = 6, 25, 8
	})
}
