package jsonl

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// readBoth reads data sequentially and in parallel (in small chunks, its
// values interned in parallel in small batches) and requires the same
// outcome: the same history (warnings and dropped counts included) or the
// same error.
func readBoth(t *testing.T, data []byte, lenient bool) {
	t.Helper()
	defer func() { forceSequential = false }()
	forceSequential = true
	hs, errS := Parse(bytes.NewReader(data), "x.jsonl", Options{Lenient: lenient})
	forceSequential = false
	// Small batches of values interned in parallel, so that they end
	// anywhere in the history.
	defer func(n, c int) { parallelBatch, chunkSize = n, c }(parallelBatch, chunkSize)
	parallelBatch = 1 + len(data)%37
	// Chunks of a few bytes to a few lines, so that they end anywhere
	// (mid-line, on a blank line, on the last line).
	chunkSize = 1 + len(data)%211
	hp, errP := Parse(bytes.NewReader(data), "x.jsonl", Options{Lenient: lenient})
	if errS != nil {
		require.Error(t, errP, "%q", data)
		require.Equal(t, errS.Error(), errP.Error())
		return
	}
	require.NoError(t, errP, "%q", data)
	require.Equal(t, hs, hp)
}

// jsonlLines are whole lines and near-lines of every kind, good and bad.
var jsonlLines = []string{
	`{"hyperiso":1,"init":"zero","meta":{"db":"pg"}}`,
	`{"hyperiso":1,"init":"explicit","sessions":[4,3],"key_names":[[1,"a"]]}`,
	`{"init":true,"id":0,"ops":[["w",1,0],["w",2,0]]}`,
	`{"session":1,"id":1,"ops":[["w",1,10],["r",2,0]]}`,
	`{"session":2,"level":"si","ops":[["r",1,10],["w",2,20]]}`,
	`{"session":1,"status":"aborted","ops":[["w",1,11]]}`,
	`{"session":3,"ops":[["append",7,1],["r",7,[1]],["r",8,null]]}`,
	`{"session":3,"ops":[["w","k","v"],["r","k","v"]]}`,
	`{"aborted_writes":[[2,99]]}`,
	`{"version_order":[[1,10,11]]}`,
	`{"session":1,"time":[3,4],"ops":[]}`,
	`{"session":4,"ops":[["insert",5,1],["select",{"keys":[0,10]},[[5,1],[1,10]]],["delete",5],["r",5,null]]}`,
	`{"session":4,"ops":[["select",{"keys":[0,10],"in":[1]},[]]]}`,
	`{"session":1,"id":1,"ops":[]}`,
	`{"session":1,"ops":[["w",1,1e3]]}`,
	`{"session":1,"ops":[],"x":{"y":[1,2]}}`,
	`{"session":1,"session":2,"ops":[]}`,
	`{"session":1,"ops":[["w",1,2]]`,
	`[1,2]`,
	``,
	`   `,
	"\ufeff{\"session\":1,\"ops\":[]}",
	"{\"session\":1,\"ops\":[[\"w\",\"\xff\",1]]}",
	`{"hyperiso":1,"init":"implicit","dropped":[1,2,3]}`,
	`{"init":true,"ops":[["w",5,5]]}`,
}

// TestPipelineMatchesSequential: on random mixes of lines (more than a
// batch, so that batches meet mid-history), on the fuzz corpus, and in
// both modes, the pipelined reader gives what the sequential one gives.
func TestPipelineMatchesSequential(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 300 {
		n := rng.IntN(8)
		if i%10 == 0 {
			n = 1000 + rng.IntN(500)
		}
		var b strings.Builder
		for range n {
			// Mostly good transaction lines, so that long inputs get far.
			if rng.IntN(4) > 0 {
				b.WriteString(jsonlLines[3+rng.IntN(4)])
			} else {
				b.WriteString(jsonlLines[rng.IntN(len(jsonlLines))])
			}
			b.WriteString([]string{"\n", "\r\n", "\n\n"}[rng.IntN(3)])
		}
		data := []byte(b.String())
		if rng.IntN(3) == 0 && len(data) > 0 {
			data = data[:rng.IntN(len(data))] // cut anywhere
		}
		readBoth(t, data, false)
		readBoth(t, data, true)
	}
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzParse", "*"))
	require.NoError(t, err)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		readBoth(t, data, false)
		readBoth(t, data, true)
	}
}
