package bench

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/formats/jsonl"
)

// TestReorder: every order keeps the header and end lines, every
// transaction once, and each session's order; sessions are contiguous in
// OrderSessions, and OrderShuffled is a different interleaving.
func TestReorder(t *testing.T) {
	var in strings.Builder
	in.WriteString(`{"hyperiso":1,"init":"zero","trailer":true}` + "\n")
	n := 0
	for round := range 20 {
		for s := 1; s <= 3; s++ {
			n++
			in.WriteString(`{"session":` + strconv.Itoa(s) + `,"id":` + strconv.Itoa(n) + `,"ops":[["w",` + strconv.Itoa(round) + `,` + strconv.Itoa(n) + `]]}` + "\n")
		}
	}
	in.WriteString(`{"end":{"transactions":60,"operations":60,"lines":61}}` + "\n")
	for _, order := range Orders {
		var out bytes.Buffer
		require.NoError(t, Reorder(strings.NewReader(in.String()), &out, order, 7), order)
		h, err := jsonl.Parse(bytes.NewReader(out.Bytes()), order, jsonl.Options{})
		require.NoError(t, err, order)
		require.Len(t, h.Txns, 61, order)
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		require.True(t, strings.HasPrefix(lines[0], `{"hyperiso"`) && strings.HasPrefix(lines[len(lines)-1], `{"end"`), order)
		last := map[int64]int64{}
		switches := 0
		for i := 1; i < len(h.Txns); i++ {
			tx := h.Txns[i]
			s := h.Sessions[tx.Session].ID
			require.Greater(t, tx.ID, last[s], "%s: session %d out of order", order, s)
			last[s] = tx.ID
			if i > 1 && h.Txns[i-1].Session != tx.Session {
				switches++
			}
		}
		switch order {
		case OrderCommit:
			require.Equal(t, in.String(), out.String())
		case OrderSessions:
			require.Equal(t, 2, switches)
		case OrderShuffled:
			require.NotEqual(t, in.String(), out.String())
			require.Greater(t, switches, 10)
		}
	}
	require.Error(t, Reorder(strings.NewReader(in.String()), &bytes.Buffer{}, "random", 1))
}
