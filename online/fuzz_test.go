package online

import (
	"bytes"
	"context"
	"testing"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
)

// FuzzChecker feeds any bytes, cut at cut, to a Checker: no panic, and
// when the stream reads as a whole, the final verdicts are the offline
// check's of the same bytes (an error where the offline reading fails).
func FuzzChecker(f *testing.F) {
	f.Add([]byte(`{"hyperiso":1,"init":"zero","trailer":true}
{"session":1,"ops":[["r",1,0],["w",2,10]]}
{"session":2,"ops":[["r",2,0],["w",1,20]]}
{"end":{"transactions":2,"operations":4,"lines":3}}
`), 17)
	f.Add([]byte(`{"session":1,"ops":[["append",1,5],["r",1,[5]]]}
{"session":2,"status":"unknown","ops":[["r",1,[5,6]]]}
{"aborted_writes":[[1,6]]}
`), 3)
	f.Add([]byte("{\"session\":1,\"id\":3,\"ops\":[[\"w\",\"k\",\"v\"]]}\n{\"session\":1,\"ops\":[[\"r\",\"k\",\"v\"]]}"), 40)
	levels := []history.Level{history.SER, history.SI, history.RC}
	f.Fuzz(func(t *testing.T, data []byte, cut int) {
		if len(data) > 4<<10 {
			return
		}
		ctx := context.Background()
		c, _ := New(Options{Name: "fuzz", Levels: levels, Unique: true})
		if cut < 0 {
			cut = -cut
		}
		cut %= len(data) + 1
		c.Write(data[:cut])
		_, _ = c.Check(ctx)
		c.Write(data[cut:])
		_, _ = c.Check(ctx)
		st, err := c.Finish(ctx)
		whole := data
		if len(whole) > 0 && whole[len(whole)-1] != '\n' {
			whole = append(bytes.Clone(whole), '\n')
		}
		h, perr := jsonl.Parse(bytes.NewReader(whole), "fuzz", jsonl.Options{Prefix: c.Ended()})
		if perr != nil {
			if err == nil {
				t.Fatalf("the stream read, the offline reading failed: %v", perr)
			}
			return
		}
		for i, l := range levels {
			res, cerr := check.Check(ctx, h, l, check.Options{})
			if cerr != nil {
				if err == nil {
					t.Fatalf("%s: the stream checked, offline: %v", l, cerr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: offline %v, the stream: %v", l, res.Verdict, err)
			}
			if got := st.Levels[i].Result.Verdict; got != res.Verdict {
				t.Fatalf("%s: the stream %v, offline %v", l, got, res.Verdict)
			}
			if c := st.Levels[i].Certain; c != nil && res.Verdict != check.Violated {
				t.Fatalf("%s: a certain violation, offline %v", l, res.Verdict)
			}
		}
	})
}

// FuzzFolding: any bytes, written in three pieces with a check after
// each (so that a fenced stream folds), never panic, and the final
// verdicts are the offline check's of the same bytes (or unknown, once a
// session came after a fold without the fence read).
func FuzzFolding(f *testing.F) {
	f.Add([]byte(`{"hyperiso":1,"init":"zero"}
{"session":1,"ops":[["w",1,1]]}
{"session":1,"ops":[["r",9,0],["w",9,10]]}
{"session":2,"ops":[["r",9,10],["w",9,20]]}
{"session":1,"ops":[["r",9,20]]}
{"session":2,"ops":[["r",9,20],["r",1,1]]}
{"session":1,"ops":[["r",9,20],["w",9,30],["w",1,2]]}
{"session":2,"ops":[["r",9,30],["w",9,40]]}
{"session":1,"ops":[["r",9,40]]}
{"session":2,"ops":[["r",9,40],["r",1,2]]}
{"end":{"transactions":9,"operations":17,"lines":10}}
`), 200, 400)
	levels := []history.Level{history.SER, history.SI}
	f.Fuzz(func(t *testing.T, data []byte, a, b int) {
		if len(data) > 4<<10 {
			return
		}
		ctx := context.Background()
		c, _ := New(Options{Name: "fuzz", Levels: levels, Unique: true, FenceKey: 9, FenceKeySet: true})
		n := len(data) + 1
		a, b = (a%n+n)%n, (b%n+n)%n
		if a > b {
			a, b = b, a
		}
		for _, piece := range [][]byte{data[:a], data[a:b], data[b:]} {
			c.Write(piece)
			_, _ = c.Check(ctx)
		}
		st, err := c.Finish(ctx)
		whole := data
		if len(whole) > 0 && whole[len(whole)-1] != '\n' {
			whole = append(bytes.Clone(whole), '\n')
		}
		h, perr := jsonl.Parse(bytes.NewReader(whole), "fuzz", jsonl.Options{Prefix: c.Ended()})
		if perr != nil {
			if err == nil && st.Folded == 0 {
				t.Fatalf("the stream read, the offline reading failed: %v", perr)
			}
			return
		}
		for i, l := range levels {
			res, cerr := check.Check(ctx, h, l, check.Options{})
			if cerr != nil {
				return
			}
			if err != nil {
				t.Fatalf("%s: offline %v, the stream (folded %d): %v", l, res.Verdict, st.Folded, err)
			}
			got := st.Levels[i].Result.Verdict
			if got != res.Verdict && !(got == check.Unknown && st.FoldBroken != "") {
				t.Fatalf("%s: the stream %v (folded %d), offline %v", l, got, st.Folded, res.Verdict)
			}
		}
	})
}
