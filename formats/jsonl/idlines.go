package jsonl

// idLines maps transaction ids to the lines that gave them: in an array
// while ids are small and dense, as they mostly are (1, 2, 3, …), in a
// map otherwise.
type idLines struct {
	dense  []int // id -> line, 0 for none
	sparse map[int64]int
}

func (m *idLines) get(id int64) (int, bool) {
	if id >= 0 && id < int64(len(m.dense)) && m.dense[id] != 0 {
		return m.dense[id], true
	}
	// An id may have gone to the map before the array grew to cover it.
	l, ok := m.sparse[id]
	return l, ok
}

func (m *idLines) set(id int64, line int) {
	if id >= 0 && id < int64(2*len(m.dense)+1024) {
		if id >= int64(len(m.dense)) {
			m.dense = append(m.dense, make([]int, int(id)+1-len(m.dense))...)
		}
		m.dense[id] = line
		return
	}
	if m.sparse == nil {
		m.sparse = make(map[int64]int)
	}
	m.sparse[id] = line
}
