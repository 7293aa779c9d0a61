package jsonl

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/hyperiso/hyperiso/history"
)

// diff compares two histories as the format promises to keep them: by raw
// keys and values, not by interned ids (which depend on reading order).
// It returns "" when they are equal.
func diff(a, b *history.History) string {
	var d []string
	add := func(format string, args ...any) { d = append(d, fmt.Sprintf(format, args...)) }
	if a.InitKind != b.InitKind {
		add("InitKind %v vs %v", a.InitKind, b.InitKind)
	}
	if len(a.Sessions) != len(b.Sessions) {
		add("%d vs %d sessions", len(a.Sessions), len(b.Sessions))
	} else {
		for i := range a.Sessions {
			if a.Sessions[i].ID != b.Sessions[i].ID || len(a.Sessions[i].Txns) != len(b.Sessions[i].Txns) {
				add("session %d: id %d/%d, %d/%d txns", i, a.Sessions[i].ID, b.Sessions[i].ID, len(a.Sessions[i].Txns), len(b.Sessions[i].Txns))
			}
		}
	}
	if len(a.Txns) != len(b.Txns) {
		add("%d vs %d txns", len(a.Txns), len(b.Txns))
		return strings.Join(d, "\n")
	}
	for t := range a.Txns {
		x, y := &a.Txns[t], &b.Txns[t]
		if x.ID != y.ID || x.Session != y.Session || x.Index != y.Index || x.Status != y.Status || x.Level != y.Level ||
			x.Timed != y.Timed || x.Start != y.Start || x.End != y.End {
			add("txn %d: %+v vs %+v", t, *x, *y)
		}
		ox, oy := opsString(a, x.Ops), opsString(b, y.Ops)
		if t == 0 {
			// T⊥'s writes are ordered by raw key, and a named key's raw
			// stand-in is the model's choice: compare them as a set.
			ox, oy = sortedOps(ox), sortedOps(oy)
		}
		if ox != oy {
			add("txn %d ops: %s vs %s", t, ox, oy)
		}
	}
	if x, y := fmt.Sprint(a.Selects), fmt.Sprint(b.Selects); x != y {
		add("selects %s vs %s", x, y)
	}
	aw := func(h *history.History) string {
		var s []string
		for _, v := range h.AbortedWrites {
			s = append(s, fmt.Sprintf("(%s,%s)", keyOf(h, v.Key), valOf(h, v.Key, v.Value)))
		}
		return strings.Join(s, " ")
	}
	if x, y := aw(a), aw(b); x != y {
		add("aborted writes: %s vs %s", x, y)
	}
	hints := func(h *history.History) string {
		var s []string
		for _, v := range h.VersionHints {
			s = append(s, fmt.Sprintf("%s:%s<%s", keyOf(h, v.Key), valOf(h, v.Key, v.Before), valOf(h, v.Key, v.After)))
		}
		return strings.Join(s, " ")
	}
	if x, y := hints(a), hints(b); x != y {
		add("version orders: %s vs %s", x, y)
	}
	if a.Dropped != b.Dropped {
		add("dropped %v vs %v", a.Dropped, b.Dropped)
	}
	if !maps.Equal(a.Meta, b.Meta) {
		add("meta %v vs %v", a.Meta, b.Meta)
	}
	names := func(h *history.History) map[string]string {
		m := map[string]string{}
		for k, n := range h.KeyNames {
			if n != "" {
				m[keyOf(h, history.KeyID(k))] = n
			}
		}
		return m
	}
	if x, y := names(a), names(b); !maps.Equal(x, y) {
		add("key names %v vs %v", x, y)
	}
	return strings.Join(d, "\n")
}

// keyOf and valOf render a key or value as the format keeps it: a name
// (whose integer stand-in is the model's choice), or the integer.
func keyOf(h *history.History, k history.KeyID) string {
	if n := h.KeyName(k); n != "" {
		return fmt.Sprintf("%q", n)
	}
	return fmt.Sprint(h.Key(k))
}

func valOf(h *history.History, k history.KeyID, v history.ValueID) string {
	if n := h.ValueName(k, v); n != "" {
		return fmt.Sprintf("%q", n)
	}
	return fmt.Sprint(h.Value(k, v))
}

func sortedOps(s string) string {
	f := strings.Split(s, ") ")
	slices.Sort(f)
	return strings.Join(f, ") ")
}

func opsString(h *history.History, ops []history.Op) string {
	var sb strings.Builder
	for _, op := range ops {
		fmt.Fprintf(&sb, "%v(%s,%s", op.Kind, keyOf(h, op.Key), valOf(h, op.Key, op.Value))
		if op.Kind == history.OpReadList {
			sb.WriteString(",[")
			for i, v := range h.List(op) {
				if i > 0 {
					sb.WriteByte(' ')
				}
				sb.WriteString(valOf(h, op.Key, v))
			}
			sb.WriteByte(']')
		} else if s, ok := h.SelectOf(op); ok {
			fmt.Fprintf(&sb, ",select[%d,%d)", s.Lo, s.Hi)
		} else if op.List != 0 {
			sb.WriteString(",list?")
		}
		if op.Src != history.SrcPlain {
			fmt.Fprintf(&sb, ",%v", op.Src)
		}
		sb.WriteString(") ")
	}
	return sb.String()
}

// roundTrip writes h, reads it back and returns the reread history, the
// first output, and a description of any difference (including between the
// first and the second output).
func roundTrip(h *history.History) (*history.History, string, error) {
	var a, b bytes.Buffer
	if err := Write(&a, h); err != nil {
		return nil, "", err
	}
	h2, err := Parse(bytes.NewReader(a.Bytes()), "rt.jsonl", Options{})
	if err != nil {
		return nil, a.String(), fmt.Errorf("reread: %w\n%s", err, a.String())
	}
	if err := h2.CheckInvariants(); err != nil {
		return nil, a.String(), fmt.Errorf("reread inconsistent: %w", err)
	}
	if d := diff(h, h2); d != "" {
		return h2, a.String(), fmt.Errorf("round trip differs:\n%s\n%s", d, a.String())
	}
	if err := Write(&b, h2); err != nil {
		return nil, a.String(), err
	}
	if a.String() != b.String() {
		return h2, a.String(), fmt.Errorf("second write differs:\n%s\n%s", a.String(), b.String())
	}
	return h2, a.String(), nil
}

var interesting = []int64{0, 1, 2, 3, -1, 42, math.MaxInt64, math.MinInt64, history.EmptyList, 1 << 53, 1<<53 + 1, -9007199254740993}

func randInt(r *rand.Rand) int64 {
	switch r.IntN(3) {
	case 0:
		return interesting[r.IntN(len(interesting))]
	case 1:
		return int64(r.IntN(8))
	}
	return int64(r.Uint64())
}

var names = []string{"x", "", "y\"q", "tab\tnl\n", "ünï", "\x01ctl", "\\", "🙂", "</script>"}

// randomHistory builds a history through the Builder the way readers do,
// covering every feature of the format: sessions created in any order
// (some without transactions), arbitrary ids, statuses, levels, all
// operation kinds, list reads, empty reads, every kind of initial state,
// aborted writes, metadata and key names.
func randomHistory(r *rand.Rand) *history.History {
	b := history.NewBuilder("rand", "test")
	nk := 1 + r.IntN(6)
	keys := make([]int64, 0, nk)
	for len(keys) < nk {
		if k := randInt(r); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	list := make([]bool, nk)
	for i := range list {
		list[i] = r.IntN(3) == 0
	}
	var sess []int32
	for range r.IntN(5) {
		sess = append(sess, b.Session(randInt(r)))
	}
	used := map[int64]bool{}
	newID := func() int64 {
		for {
			if id := randInt(r); !used[id] {
				used[id] = true
				return id
			}
		}
	}
	vals := []int64{0, 1, 2, history.EmptyList, randInt(r), randInt(r)}
	if len(sess) > 0 {
		for range r.IntN(10) {
			t := b.Begin(sess[r.IntN(len(sess))], newID(), history.Status(r.IntN(3)), history.Pos{})
			if r.IntN(3) == 0 {
				b.SetLevel(t, history.Level(1+r.IntN(5)))
			}
			for range r.IntN(5) {
				i := r.IntN(nk)
				k, v := keys[i], vals[r.IntN(len(vals))]
				switch {
				case list[i] && r.IntN(2) == 0:
					b.Append(t, k, v)
				case list[i]:
					var l []int64
					for range r.IntN(4) {
						l = append(l, vals[r.IntN(len(vals))])
					}
					b.ReadList(t, k, l, history.EmptyList)
				case r.IntN(2) == 0:
					b.Write(t, k, v)
				default:
					b.Read(t, k, v)
				}
			}
		}
	}
	for range r.IntN(3) {
		b.AbortedWrite(keys[r.IntN(nk)], vals[r.IntN(len(vals))])
	}
	switch r.IntN(6) {
	case 0: // none, possibly with an id
		if r.IntN(2) == 0 {
			b.SetInit(history.InitNone, randInt(r))
		}
	case 1: // implicit, all zero (the "zero" shape, when every key is covered)
		id := int64(-1)
		if used[id] {
			id = newID()
		}
		b.SetInit(history.InitImplicit, id)
		for i, k := range keys {
			if list[i] {
				b.InitWrite(k, history.EmptyList)
			}
		}
		b.InitAllKeys(0)
	case 2: // implicit, partial and arbitrary
		b.SetInit(history.InitImplicit, newID())
		for _, k := range keys {
			if r.IntN(2) == 0 {
				b.InitWrite(k, vals[r.IntN(len(vals))])
			}
		}
	case 3: // explicit via SetInit
		b.SetInit(history.InitExplicit, newID())
		for _, k := range keys {
			if r.IntN(2) == 0 {
				b.InitWrite(k, vals[r.IntN(len(vals))])
			}
		}
	case 4: // explicit via promotion of a write-only transaction
		s := b.Session(randInt(r))
		t := b.Begin(s, newID(), history.Committed, history.Pos{})
		for i, k := range keys {
			if i == 0 || r.IntN(2) == 0 {
				b.Write(t, k, vals[r.IntN(len(vals))])
			}
		}
		b.PromoteToInit(t)
		if r.IntN(2) == 0 {
			b.InitAllKeys(0)
		}
	case 5: // implicit with an unusual id and full coverage
		b.SetInit(history.InitImplicit, newID())
		b.InitAllKeys(randInt(r))
	}
	for range r.IntN(3) {
		b.SetMeta(names[r.IntN(len(names))]+"k", names[r.IntN(len(names))])
	}
	usedName := map[string]bool{}
	for _, k := range keys {
		// Names are unique: a key is its name in the file.
		if name := names[r.IntN(len(names))]; r.IntN(4) == 0 && !usedName[name] {
			usedName[name] = true
			b.SetKeyName(k, name)
		}
	}
	return b.Finish()
}
