package apps

import (
	"context"
	"fmt"
	"slices"

	"github.com/hyperiso/hyperiso/collect/workload"
)

// keyBase separates the key ranges of tables' column groups: a group's
// key is its number times keyBase plus the row's index.
const keyBase = 1_000_000_000_000

// col is a primary-key column, whose values are 1…bound.
type col struct {
	name  string
	bound int64
}

// group is a set of a table's columns that transactions read and write
// together: one key of the history per row, whose value is the group's
// version column v_NAME, set to a fresh unique value by every write.
type group struct {
	name string
	cols []string
}

// table is one table of an application: integer columns, a primary key,
// column groups (every data column in exactly one), and secondary indexes
// (SQL only; the key-value stores scan).
type table struct {
	id     int // 1…19: the table's key ranges
	name   string
	pk     []col
	groups []group
	index  [][]string

	cols     []string       // data columns, in the groups' order
	colGroup map[string]int // data or version column → its group
	sqlName  string         // the SQL table, once created
}

func newTable(id int, name string, pk []col, groups []group, index ...[]string) *table {
	t := &table{id: id, name: name, pk: pk, groups: groups, index: index, colGroup: map[string]int{}}
	for g, gr := range groups {
		t.colGroup["v_"+gr.name] = g
		for _, c := range gr.cols {
			t.cols = append(t.cols, c)
			t.colGroup[c] = g
		}
	}
	return t
}

// rows is the number of row indexes the primary key's bounds allow, or
// keyBase if that is keyBase or more.
func (t *table) rows() int64 {
	n := int64(1)
	for _, c := range t.pk {
		if c.bound >= keyBase/n+1 {
			return keyBase
		}
		n *= c.bound
	}
	return n
}

// row is the index (1…rows) of the row with primary key pk.
func (t *table) row(pk []int64) (int64, error) {
	if len(pk) != len(t.pk) {
		return 0, fmt.Errorf("%s: %d key values for %d key columns", t.name, len(pk), len(t.pk))
	}
	r := int64(0)
	for i, c := range t.pk {
		if pk[i] < 1 || pk[i] > c.bound {
			return 0, fmt.Errorf("%s: %s = %d is outside the workload's bounds 1…%d", t.name, c.name, pk[i], c.bound)
		}
		r = r*c.bound + pk[i] - 1
	}
	return r + 1, nil
}

// versionKey is the history's key of group g of row r.
func (t *table) versionKey(g int, r int64) int64 { return int64(t.id*100+g+1)*keyBase + r }

// dataKey is the key-value stores' key of data column c (its index in
// cols) of row r, and existsKey the one that says the row exists: negative,
// apart from the history's keys.
func (t *table) dataKey(c int, r int64) int64 { return -(int64(t.id*100+50+c)*keyBase + r) }
func (t *table) existsKey(r int64) int64      { return -(int64(t.id*100+99)*keyBase + r) }

// groupsOf returns the groups the columns belong to, in table order; no
// columns means every group.
func (t *table) groupsOf(cols []string) []int {
	if len(cols) == 0 {
		gs := make([]int, len(t.groups))
		for i := range gs {
			gs[i] = i
		}
		return gs
	}
	var gs []int
	for _, c := range cols {
		g, ok := t.colGroup[c]
		if !ok {
			panic(fmt.Sprintf("apps: table %s has no column %s", t.name, c))
		}
		if !slices.Contains(gs, g) {
			gs = append(gs, g)
		}
	}
	slices.Sort(gs)
	return gs
}

// set is one assignment of an UPDATE: col = val, or col = col + val.
type set struct {
	col string
	val int64
	add bool
}

// scan selects rows whose primary key starts with prefix, whose next key
// column lies in [lo, hi) (hi 0: its bound + 1), and whose column where
// (if any) equals eq; in key order (the next column descending if desc),
// at most limit (0: all).
type scan struct {
	prefix []int64
	lo, hi int64
	where  string
	eq     int64
	desc   bool
	limit  int
}

// backend runs a table's statements on one transaction: SQL, or keys and
// values. Columns are data and version columns.
type backend interface {
	get(ctx context.Context, t *table, pk []int64, cols []string, lock bool) ([]int64, bool, error)
	update(ctx context.Context, t *table, pk []int64, sets []set) (bool, error)
	insert(ctx context.Context, t *table, pk []int64, cols []string, vals []int64) error
	// delete is given the versions of every group the row had: the key-value
	// stores write them.
	delete(ctx context.Context, t *table, pk []int64, vers []int64) (bool, error)
	// scan returns each row's primary key followed by cols.
	scan(ctx context.Context, t *table, s scan, cols []string) ([][]int64, error)
}

// txn is one application transaction: statements through its backend,
// each read and write of a group recorded with the group's version.
type txn struct {
	ctx context.Context
	b   backend
	rec func(workload.Op)
	ver func() int64 // a fresh unique version
}

// withVersions returns cols followed by the version columns of their
// groups, and the groups.
func withVersions(t *table, cols []string) ([]string, []int) {
	gs := t.groupsOf(cols)
	all := slices.Clone(cols)
	for _, g := range gs {
		all = append(all, "v_"+t.groups[g].name)
	}
	return all, gs
}

// recordReads records a read of each group in gs of row pk, whose
// versions vers holds.
func (x *txn) recordReads(t *table, pk []int64, gs []int, vers []int64) error {
	r, err := t.row(pk)
	if err != nil {
		return err
	}
	for i, g := range gs {
		x.rec(workload.Op{Kind: workload.Read, Key: t.versionKey(g, r), Value: vers[i]})
	}
	return nil
}

// get reads cols of row pk (every group if none): SELECT … WHERE key.
func (x *txn) get(t *table, pk []int64, cols ...string) ([]int64, bool, error) {
	all, gs := withVersions(t, cols)
	vals, found, err := x.b.get(x.ctx, t, pk, all, false)
	if err != nil || !found {
		return nil, found, err
	}
	return vals[:len(cols)], true, x.recordReads(t, pk, gs, vals[len(cols):])
}

// update assigns sets to row pk and returns the values before it of the
// columns set and then of extra: a locking read (SELECT … FOR UPDATE) of
// those columns, recorded, then the UPDATE, which writes a fresh version
// of each group it changes.
func (x *txn) update(t *table, pk []int64, sets []set, extra ...string) ([]int64, bool, error) {
	cols := make([]string, 0, len(sets)+len(extra))
	for _, s := range sets {
		cols = append(cols, s.col)
	}
	return x.modify(t, pk, append(cols, extra...), func([]int64) ([]set, error) { return sets, nil })
}

// modify is update with assignments computed from the values read: it
// reads cols of row pk with a lock, records the read, and updates the row
// with what f returns (nothing if f returns none or an error, which
// modify returns). A missing row is an error.
func (x *txn) modify(t *table, pk []int64, cols []string, f func(old []int64) ([]set, error)) ([]int64, bool, error) {
	all, gs := withVersions(t, cols)
	vals, found, err := x.b.get(x.ctx, t, pk, all, true)
	if err != nil {
		return nil, false, err
	}
	if !found {
		return nil, false, fmt.Errorf("%s: no row %v to update", t.name, pk)
	}
	if err := x.recordReads(t, pk, gs, vals[len(cols):]); err != nil {
		return nil, false, err
	}
	old := vals[:len(cols)]
	sets, err := f(old)
	if err != nil || len(sets) == 0 {
		return old, true, err
	}
	set := make([]string, len(sets))
	for i, s := range sets {
		set[i] = s.col
	}
	written := t.groupsOf(set)
	sets = slices.Clone(sets)
	vers := make([]int64, len(written))
	for i, g := range written {
		vers[i] = x.ver()
		sets = append(sets, setVersion(t, g, vers[i]))
	}
	if ok, err := x.b.update(x.ctx, t, pk, sets); err != nil || !ok {
		if err == nil {
			err = fmt.Errorf("%s: the row locked vanished before its update", t.name)
		}
		return nil, false, err
	}
	x.recordWrites(t, pk, written, vers)
	return old, true, nil
}

func setVersion(t *table, g int, v int64) set { return set{col: "v_" + t.groups[g].name, val: v} }

func (x *txn) recordWrites(t *table, pk []int64, gs []int, vers []int64) {
	r, _ := t.row(pk) // checked by the caller's statement
	for i, g := range gs {
		x.rec(workload.Op{Kind: workload.Write, Key: t.versionKey(g, r), Value: vers[i]})
	}
}

// insert adds row pk with vals, one per data column in table order: a
// write of every group, each with a fresh version.
func (x *txn) insert(t *table, pk []int64, vals ...int64) error {
	if len(vals) != len(t.cols) {
		panic(fmt.Sprintf("apps: %d values for the %d columns of %s", len(vals), len(t.cols), t.name))
	}
	if _, err := t.row(pk); err != nil {
		return err
	}
	all, gs := withVersions(t, t.cols)
	vers := make([]int64, len(gs))
	for i := range vers {
		vers[i] = x.ver()
	}
	if err := x.b.insert(x.ctx, t, pk, all, slices.Concat(vals, vers)); err != nil {
		return err
	}
	x.recordWrites(t, pk, gs, vers)
	return nil
}

// delete removes row pk, a write of every group (with fresh versions that
// no read can return); found is false, and nothing recorded, if no row
// was deleted.
func (x *txn) delete(t *table, pk []int64) (bool, error) {
	if _, err := t.row(pk); err != nil {
		return false, err
	}
	gs := t.groupsOf(nil)
	vers := make([]int64, len(gs))
	for i := range vers {
		vers[i] = x.ver()
	}
	found, err := x.b.delete(x.ctx, t, pk, vers)
	if err != nil || !found {
		return false, err
	}
	x.recordWrites(t, pk, gs, vers)
	return true, nil
}

// need is get of a row that must exist.
func (x *txn) need(t *table, pk []int64, cols ...string) ([]int64, error) {
	vals, found, err := x.get(t, pk, cols...)
	if err == nil && !found {
		err = fmt.Errorf("%s: no row %v", t.name, pk)
	}
	return vals, err
}

// scanned is one row a scan returned: its key and the columns asked for.
type scanned struct {
	pk, vals []int64
}

// scan selects cols of the rows s describes: a read of each row returned,
// of the groups of cols and of the column it filters on.
func (x *txn) scan(t *table, s scan, cols ...string) ([]scanned, error) {
	read := slices.Clone(cols)
	if s.where != "" && !slices.Contains(read, s.where) {
		read = append(read, s.where)
	}
	all, gs := withVersions(t, read)
	rows, err := x.b.scan(x.ctx, t, s, all)
	if err != nil {
		return nil, err
	}
	out := make([]scanned, len(rows))
	n := len(t.pk)
	for i, r := range rows {
		out[i] = scanned{pk: r[:n], vals: r[n : n+len(cols)]}
		if err := x.recordReads(t, r[:n], gs, r[n+len(read):]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// keyNames lists the primary key's columns.
func (t *table) keyNames() []string {
	names := make([]string, len(t.pk))
	for i, c := range t.pk {
		names[i] = c.name
	}
	return names
}
