package cobra

// duplicate is the first write, in scan order, whose write id an earlier
// write has (second.file is -1 if none).
type duplicate struct {
	wid           int64
	first, second loc
}

// indexWriteIDs puts the writes with their own write id into s.wids,
// each id at its first write, and returns the first duplicate. The logs
// are walked again once the scan has counted the writes, so that the
// table is sized once: a Go map filled while scanning spent as long as
// the rest of the scan.
func (s *scanner) indexWriteIDs() duplicate {
	dup := duplicate{second: loc{file: -1}}
	s.wids.reserve(s.otherW)
	for fi, f := range s.files {
		d := f.data
		for off := 0; off < len(d); {
			switch d[off] {
			case 'S':
				off += sizeS
			case 'C':
				off += sizeC
			case 'W':
				if wid := be64(d[off+1:]); wid != UniversalID {
					here := loc{int32(fi), int64(off)}
					if first, ok := s.wids.get(wid); !ok {
						s.wids.put(wid, here)
					} else if dup.second.file < 0 {
						dup = duplicate{wid, first, here}
					}
				}
				off += sizeW
			case 'R':
				off += sizeR
			}
		}
	}
	return dup
}

// widTable maps write ids to where their writes are: open addressing
// with linear probing over one flat array, sized once the scan has
// counted the writes (a Go map filled while scanning spent as long as the
// rest of the scan).
type widTable struct {
	slots []widSlot // len is a power of two
	shift uint
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
