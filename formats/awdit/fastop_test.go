package awdit

import (
	"math/rand/v2"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// TestFastOpMatchesFields: whatever fastOp reads, the general reading
// (fields, parseUint) reads as the same operation; and it reads the
// common lines.
func TestFastOpMatchesFields(t *testing.T) {
	lines := []string{
		"r 1 0", "w 44175 33000000001", "w 1234567890123456789 9", "r 12345678901234567890 1",
		"r 007 0", "r  1 0", "r 1 0 ", " r 1 0", "r 1", "x 1 2", "r 1 2 3", "r -1 2", "r 1\t2",
		"rr 1 2", "w 1 2\r", "r 18446744073709551615 1", "r 1 ", "=", "-",
	}
	accepted := 0
	check := func(s string) {
		o, ok := fastOp([]byte(s))
		if !ok {
			return
		}
		accepted++
		require.True(t, utf8.ValidString(s))
		f, n := fields([]byte(s))
		require.Equal(t, 3, n, "%q", s)
		require.Contains(t, []string{"r", "w"}, string(f[0]), "%q", s)
		k, okK := parseUint(f[1])
		v, okV := parseUint(f[2])
		require.True(t, okK && okV, "%q", s)
		require.Equal(t, op{write: string(f[0]) == "w", key: int64(k), val: int64(v)}, o, "%q", s)
	}
	for _, s := range lines {
		check(s)
	}
	require.Equal(t, 4, accepted)
	rng := rand.New(rand.NewPCG(3, 3))
	const alphabet = "rw0123456789 -=\t\rx"
	for range 50000 {
		b := []byte(lines[rng.IntN(len(lines))])
		for range 1 + rng.IntN(3) {
			i := rng.IntN(len(b) + 1)
			c := alphabet[rng.IntN(len(alphabet))]
			switch rng.IntN(3) {
			case 0:
				b = append(b[:i], append([]byte{c}, b[i:]...)...)
			case 1:
				if i < len(b) {
					b = append(b[:i], b[i+1:]...)
				}
			default:
				if i < len(b) {
					b[i] = c
				}
			}
		}
		check(string(b))
	}
}
