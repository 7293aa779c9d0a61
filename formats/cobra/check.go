package cobra

import "github.com/hyperiso/hyperiso/history"

// The warnings about reads and writes (§3.6) need what earlier records
// did to each version, and are found once the History is built, so that
// building never needs a value back from the builder: check walks the
// logs again, in scan order, beside the History's operations, the i-th W
// or R record of a transaction being its i-th operation.

// Per-version flags.
const (
	verWritten uint8 = 1 << iota // some transaction writes it
	verInit                      // the initial transaction writes it
	verDup                       // reported as written twice
)

// pendingRead is a read whose version was not written when it was met; it
// is a thin-air read unless a later record writes that version. Its
// fields are read again from the record, at, for the few reported.
type pendingRead struct {
	at  loc
	ver history.Version
}

// checker is the state of check: a byte of flags per version, all in one
// array, key k's values from at[k] on.
type checker struct {
	*builder
	at      []int
	vers    []uint8
	initVal []int32 // by KeyID: 1 + ValueID of the key's initial value
}

func (c *checker) flags(ver history.Version) *uint8 { return &c.vers[c.at[ver.Key]+int(ver.Value)] }

// check finds the warnings of h, built from bd's logs.
func (bd *builder) check(h *history.History) {
	c := &checker{builder: bd, at: make([]int, len(h.Keys)), initVal: make([]int32, len(h.Keys))}
	n := 0
	for k, vals := range h.Values {
		c.at[k] = n
		n += len(vals)
	}
	c.vers = make([]uint8, n)
	t := 0
	for fi, f := range bd.files {
		if len(f.data) == 0 {
			bd.w.add(kindEmpty, history.Pos{File: f.name, Offset: 0}, "empty log: a session with no transactions")
		}
		var ops []history.Op
		var cur int64
		d := f.data
		for off := 0; off < len(d); {
			switch d[off] {
			case 'S':
				t++
				ops = h.Txns[t].Ops
				cur = be64(d[off+1:])
				off += sizeS
			case 'C':
				off += sizeC
			case 'W':
				ver := history.Version{Key: ops[0].Key, Value: ops[0].Value}
				ops = ops[1:]
				fl := c.flags(ver)
				// Reported once per (key, value), at its second write.
				if *fl&(verWritten|verDup) == verWritten && bd.flavour == Universal {
					*fl |= verDup
					bd.w.add(kindDupValue, history.Pos{File: f.name, Offset: int64(off)}, "write of (key %d, value hash %#x) repeats an earlier write: universal-flavour values are not unique (informational)",
						be64(d[off+9:]), uint64(be64(d[off+17:])))
				}
				*fl |= verWritten
				off += sizeW
			case 'R':
				ver := history.Version{Key: ops[0].Key, Value: ops[0].Value}
				ops = ops[1:]
				c.read(ver, cur, loc{int32(fi), int64(off)}, be64(d[off+1:]), be64(d[off+9:]), be64(d[off+17:]), be64(d[off+25:]))
				off += sizeR
			}
		}
		if f.openAt > 0 {
			bd.w.add(kindOpen, history.Pos{File: f.name, Offset: f.openAt - 1}, "transaction %s has no commit record when the file ends: kept with status unknown", hexID(cur))
		}
	}
	c.finish()
}

// read goes on with a read of ver.
func (c *checker) read(ver history.Version, cur int64, at loc, wt, wid, key, hash int64) {
	if isInitID(wt) && isInitID(wid) {
		// A read of the initial state: the first one of each key defines
		// the key's initial value.
		switch iv := c.initVal[ver.Key]; {
		case iv == 0:
			c.initVal[ver.Key] = int32(ver.Value) + 1
			*c.flags(ver) |= verInit
		case iv-1 != int32(ver.Value):
			c.w.add(kindInitConflict, c.pos(at), "read of the initial state of key %d (writer %s, write id %s, value hash %#x) differs from the key's first such read; only that one defines the initial value",
				key, hexID(wt), hexID(wid), uint64(hash))
		}
		return
	}
	switch {
	case isInitID(wt) && (wid == GCTrue || wid == GCFalse):
		c.w.add(kindGC, c.pos(at), "read issued by Cobra's garbage collector (write id %s); kept as a read of a write no log has", hexID(wid))
	case isInitID(wt):
		c.w.add(kindBadInitWid, c.pos(at), "read names writer %s with write id %s, which is neither INIT nor NULL (PolySI rejects this)",
			hexID(wt), hexID(wid))
	case wt == cur:
		c.w.add(kindOwnRead, c.pos(at), "read names its own transaction %s as the writer", hexID(wt))
	}
	if *c.flags(ver)&(verWritten|verInit) == 0 {
		c.pending = append(c.pending, pendingRead{at, ver})
	}
}

// finish warns about the reads that no write explains.
func (c *checker) finish() {
	for _, r := range c.pending {
		if *c.flags(r.ver)&(verWritten|verInit) != 0 {
			continue // written later in scan order
		}
		d := c.files[r.at.file].data[r.at.off:]
		wt, wid, key, hash := be64(d[1:]), be64(d[9:]), be64(d[17:]), be64(d[25:])
		detail := ""
		if !c.w.keeps(kindThinAir) {
			// Only counted: the write id is not looked up.
		} else if w, ok := c.wids.get(wid); ok && wid != UniversalID && c.flavour == Unique {
			detail = "; that write id belongs to the write at " + c.pos(w).String()
		} else if wid != UniversalID && c.flavour == Unique {
			detail = "; no log has that write id"
		}
		c.w.add(kindThinAir, c.pos(r.at), "read of key %d (writer %s, write id %s, value hash %#x) matches no write (thin-air read)%s",
			key, hexID(wt), hexID(wid), uint64(hash), detail)
	}
}
