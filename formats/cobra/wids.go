package cobra

// widAt is a write id and where its write is.
type widAt struct {
	wid int64
	at  loc
}

// duplicate is the first write, in scan order, whose write id an earlier
// write has (second.file is -1 if none).
type duplicate struct {
	wid           int64
	first, second loc
}

// indexWriteIDs puts the writes with their own write id into s.wids, each
// id at its first write, and returns the first duplicate. It is built
// once the logs are scanned, to its final size and with look-ahead loads
// (see history.Builder.AddRaw): a Go map filled while scanning spent as
// long as the rest of the scan.
func (s *scanner) indexWriteIDs() duplicate {
	d := duplicate{second: loc{file: -1}}
	s.wids.reserve(len(s.writes))
	var sink int64
	for ws := s.writes; len(ws) > 0; {
		g := ws[:min(32, len(ws))]
		ws = ws[len(g):]
		for i := range g {
			sink += s.wids.touch(g[i].wid)
		}
		for i := range g {
			if first, dup := s.wids.get(g[i].wid); dup {
				if d.second.file < 0 {
					d = duplicate{g[i].wid, first, g[i].at}
				}
				continue
			}
			s.wids.put(g[i].wid, g[i].at)
		}
	}
	s.writes = nil
	s.wids.sink = sink
	return d
}

// widTable maps write ids to where their writes are: open addressing
// with linear probing over one flat array.
type widTable struct {
	slots []widSlot // len is a power of two
	shift uint
	sink  int64 // what touch loaded
}

type widSlot struct {
	wid  int64
	off  int64
	file int32 // 1 + the file's index; 0 marks a free slot
}

func (t *widTable) hash(wid int64) uint64 {
	h := uint64(wid) * 0x9E3779B97F4A7C15
	h ^= h >> 29
	h *= 0xBF58476D1CE4E5B9
	return h >> t.shift
}

// reserve sizes the empty table for n ids.
func (t *widTable) reserve(n int) {
	size := 64
	for 4*n > 3*size {
		size *= 2
	}
	t.slots = make([]widSlot, size)
	t.shift = 64
	for s := size; s > 1; s >>= 1 {
		t.shift--
	}
}

func (t *widTable) get(wid int64) (loc, bool) {
	if len(t.slots) == 0 {
		return loc{}, false
	}
	mask := uint64(len(t.slots) - 1)
	for i := t.hash(wid); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.file == 0 {
			return loc{}, false
		}
		if s.wid == wid {
			return loc{s.file - 1, s.off}, true
		}
	}
}

// put adds wid, which must not be present, at l; the table must have room.
func (t *widTable) put(wid int64, l loc) {
	mask := uint64(len(t.slots) - 1)
	i := t.hash(wid)
	for t.slots[i].file != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = widSlot{wid, l.off, l.file + 1}
}

// touch loads the slot where wid is probed first.
func (t *widTable) touch(wid int64) int64 { return t.slots[t.hash(wid)].off }
