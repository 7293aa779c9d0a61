package workload

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
)

// WriteSerial runs the workload against an imaginary store that executes
// one transaction at a time, the next one from a session drawn at random
// among those with transactions left, and streams the history to out as
// hyperiso's JSON Lines (init "zero": every key starts at 0). Each read
// returns the latest committed value, or the transaction's own earlier
// write; a list read (append) returns the latest committed list followed
// by the transaction's own earlier appends to it. Rollbacks are written as
// aborted transactions. The history is
// serializable, so it satisfies every level, and it is a pure function of
// the Config: no goroutines, no clock. Memory is O(Keys + Sessions)
// whatever the number of transactions (plus the lists' elements, for
// append), so that the scale bench can write millions of them. meta is added to the header's metadata.
func (w *Workload) WriteSerial(ctx context.Context, out io.Writer, meta map[string]string) error {
	c := &w.cfg
	if w.Rows() {
		return fmt.Errorf("the serial store has no rows: it cannot run the %s workload", w.name)
	}
	bw := bufio.NewWriterSize(out, 1<<20)
	buf := []byte(`{"hyperiso":1,"init":"zero","meta":{"collector":"hyperiso bench (serial store)","workload":`)
	buf = strconv.AppendQuote(buf, w.name)
	buf = append(buf, `,"params":`...)
	buf = strconv.AppendQuote(buf, w.Describe())
	for _, k := range slices.Sorted(maps.Keys(meta)) {
		buf = append(buf, ',')
		buf = strconv.AppendQuote(buf, k)
		buf = append(buf, ':')
		buf = strconv.AppendQuote(buf, meta[k])
	}
	// Sessions in their numbers' order, not in the order they first run.
	buf = append(buf, `},"sessions":[`...)
	for i := range c.Sessions {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = strconv.AppendInt(buf, int64(i)+1, 10)
	}
	buf = append(buf, "]}\n"...)
	store := make([]int64, c.Keys+1) // keys are 1…Keys
	sessions := make([]*Session, c.Sessions)
	left := make([]int, c.Sessions) // transactions left per session
	live := make([]int, c.Sessions) // sessions with transactions left
	for i := range sessions {
		sessions[i], left[i], live[i] = w.Session(i), c.Txns, i
	}
	if c.Txns == 0 {
		live = live[:0]
	}
	sched := rand.New(rand.NewPCG(uint64(c.Seed), 0x5e71a1))
	own := map[int64]int64{} // the running transaction's writes
	var lists [][]int64      // append: the committed lists, by key
	ownList := map[int64][]int64{}
	if w.Lists() {
		lists = make([][]int64, w.Keys()+1)
	}
	for id := int64(1); len(live) > 0; id++ {
		if id&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		li := sched.IntN(len(live))
		s := live[li]
		if left[s]--; left[s] == 0 {
			live[li] = live[len(live)-1]
			live = live[:len(live)-1]
		}
		t := sessions[s].Next()
		buf = append(buf, `{"session":`...)
		buf = strconv.AppendInt(buf, int64(s)+1, 10)
		buf = append(buf, `,"id":`...)
		buf = strconv.AppendInt(buf, id, 10)
		if t.Rollback {
			buf = append(buf, `,"status":"aborted"`...)
		}
		buf = append(buf, `,"ops":[`...)
		clear(own)
		clear(ownList)
		n := 0
		for _, op := range t.Ops {
			if op.Kind == Pause {
				continue
			}
			if n > 0 {
				buf = append(buf, ',')
			}
			n++
			v := op.Value
			switch op.Kind {
			case Append:
				buf = append(buf, `["append",`...)
				ownList[op.Key] = append(ownList[op.Key], v)
				buf = strconv.AppendInt(buf, op.Key, 10)
				buf = append(buf, ',')
				buf = strconv.AppendInt(buf, v, 10)
				buf = append(buf, ']')
				continue
			case ReadList:
				buf = append(buf, `["r",`...)
				buf = strconv.AppendInt(buf, op.Key, 10)
				buf = append(buf, ",["...)
				for i, e := range slices.Concat(lists[op.Key], ownList[op.Key]) {
					if i > 0 {
						buf = append(buf, ',')
					}
					buf = strconv.AppendInt(buf, e, 10)
				}
				buf = append(buf, "]]"...)
				continue
			}
			if op.Kind == Read {
				buf = append(buf, `["r",`...)
				var ok bool
				if v, ok = own[op.Key]; !ok {
					v = store[op.Key]
				}
			} else {
				buf = append(buf, `["w",`...)
				own[op.Key] = v
			}
			buf = strconv.AppendInt(buf, op.Key, 10)
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, v, 10)
			buf = append(buf, ']')
		}
		buf = append(buf, "]}\n"...)
		if !t.Rollback {
			for k, v := range own {
				store[k] = v
			}
			for k, l := range ownList {
				lists[k] = append(lists[k], l...)
			}
		}
		if len(buf) > 1<<16 {
			if _, err := bw.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	if _, err := bw.Write(buf); err != nil {
		return err
	}
	return bw.Flush()
}
