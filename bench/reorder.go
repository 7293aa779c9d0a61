package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
)

// Orders in which the scale bench lists a history's transactions, each
// session's own order kept: speed must not depend on the file being in
// commit order, which most real histories are not (Cobra's per-client
// logs, dbcop's session-by-session files).
const (
	// OrderCommit is the order the history was written in (the store's
	// commit order for the scale histories).
	OrderCommit = "commit"
	// OrderSessions lists one session after another.
	OrderSessions = "sessions"
	// OrderShuffled interleaves the sessions at random (seeded).
	OrderShuffled = "shuffled"
)

// Orders lists the orders Reorder knows, commit first.
var Orders = []string{OrderCommit, OrderSessions, OrderShuffled}

// Reorder copies the JSON Lines history in to out with its transaction
// lines in order (one of Orders), keeping each session's order and the
// header, init and end lines in place; seed drives OrderShuffled. It holds
// the transaction lines in memory.
func Reorder(in io.Reader, out io.Writer, order string, seed uint64) error {
	if order != OrderCommit && order != OrderSessions && order != OrderShuffled {
		return fmt.Errorf("bench: unknown order %q (want one of %v)", order, Orders)
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	var head, tail, txns [][]byte
	var sessOf []int32 // per transaction line: its session's index
	index := map[string]int32{}
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := bytes.Clone(sc.Bytes())
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var probe struct {
			Session json.RawMessage `json:"session"`
			End     json.RawMessage `json:"end"`
		}
		if err := json.Unmarshal(line, &probe); err != nil {
			return fmt.Errorf("bench: reorder: line %d: %w", lineNo, err)
		}
		switch {
		case probe.End != nil:
			tail = append(tail, line)
		case probe.Session == nil:
			head = append(head, line)
		default:
			i, ok := index[string(probe.Session)]
			if !ok {
				i = int32(len(index))
				index[string(probe.Session)] = i
			}
			txns = append(txns, line)
			sessOf = append(sessOf, i)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	// perm lists the transaction lines in the new order.
	perm := make([]int, len(txns))
	for i := range perm {
		perm[i] = i
	}
	switch order {
	case OrderSessions:
		slices.SortStableFunc(perm, func(a, b int) int { return int(sessOf[a] - sessOf[b]) })
	case OrderShuffled:
		// Which session comes next is drawn at random; within a session
		// the lines keep their order.
		queues := make([][]int, len(index))
		for i, s := range sessOf {
			queues[s] = append(queues[s], i)
		}
		bag := slices.Clone(sessOf)
		rng := rand.New(rand.NewPCG(seed, 0x5eed))
		rng.Shuffle(len(bag), func(i, j int) { bag[i], bag[j] = bag[j], bag[i] })
		for k, s := range bag {
			perm[k], queues[s] = queues[s][0], queues[s][1:]
		}
	}
	w := bufio.NewWriter(out)
	for _, l := range head {
		w.Write(l)
		w.WriteByte('\n')
	}
	for _, i := range perm {
		w.Write(txns[i])
		w.WriteByte('\n')
	}
	for _, l := range tail {
		w.Write(l)
		w.WriteByte('\n')
	}
	return w.Flush()
}

// InOrder is variant v with its transactions listed in order (Reorder): a
// variant named v.Name+"-"+order, whose history is v's, written first to
// memory and then reordered.
func InOrder(v ScaleVariant, order string) ScaleVariant {
	if order == OrderCommit {
		return v
	}
	return ScaleVariant{Name: v.Name + "-" + order, Write: func(ctx context.Context, n int, out io.Writer) error {
		var b bytes.Buffer
		if err := v.Write(ctx, n, &b); err != nil {
			return err
		}
		return Reorder(&b, out, order, uint64(n))
	}}
}
