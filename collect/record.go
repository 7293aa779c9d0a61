package collect

// What a run records: each transaction's level, its streamed form, the
// history's metadata and the history built in memory.

import (
	"cmp"
	"maps"
	"slices"
	"strconv"

	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
)

// level is the level the history records for rec: the one its mix entry
// names, or the one the store declares for the run's level.
func (r *runner) level(rec record) history.Level {
	switch {
	case rec.mix >= 0:
		// What the transaction asked for, whatever the store declares
		// for the level it ran at.
		return r.opt.entries()[rec.mix].Level
	case r.lv != nil:
		return r.lv.Level(r.opt.Isolation)
	}
	return history.LevelNone
}

// streamTxn is rec as a Sink receives it, with id id.
func (r *runner) streamTxn(rec record, id int64) jsonl.StreamTxn {
	t := jsonl.StreamTxn{Session: rec.session, ID: id, Status: rec.status, Level: r.level(rec),
		Timed: r.opt.Times, Start: rec.start, End: rec.end, Ops: make([]jsonl.StreamOp, len(rec.ops))}
	for i, op := range rec.ops {
		t.Ops[i] = jsonl.StreamOp{Write: op.kind == history.OpWrite, Key: op.key, Val: op.val,
			Append: op.kind == history.OpAppend, ReadList: op.kind == history.OpReadList, List: op.list,
			Insert: op.src == history.SrcInsert, Delete: op.src == history.SrcDelete, Select: op.src == history.SrcSelect, Hi: op.hi}
		if op.src == history.SrcSelect {
			t.Ops[i].Rows = make([][2]int64, len(op.rows))
			for j, row := range op.rows {
				t.Ops[i].Rows[j] = [2]int64{row.Key, row.Val}
			}
		}
	}
	return t
}

// meta is the history's metadata.
func meta(st Store, w *workload.Workload, opt Options) map[string]string {
	m := map[string]string{
		"collector": "hyperiso collect",
		"store":     st.Name(),
		"db":        st.Describe(),
		"isolation": isolationName(opt),
		"workload":  w.Name(),
		"params":    w.Describe(),
	}
	if len(opt.Mix.Entries) > 0 {
		m["mix"] = opt.Mix.String()
	}
	if len(opt.ByType.Types) > 0 {
		m["mix-by-type"] = byTypeName(opt)
	}
	if len(opt.Faults) > 0 {
		m["faults"] = FormatFaults(opt.Faults)
	}
	if opt.Fences.On() {
		m["fence_key"] = strconv.Itoa(FenceKey) // package online folds at the fences on it
	}
	maps.Copy(m, opt.Meta)
	return m
}

// build assembles the history of a run without a Sink: sessions in id
// order, each session's transactions in the order it ran them, ids 1, 2, …
// in that order.
func (r *runner) build(w *workload.Workload) *history.History {
	b := history.NewBuilder(r.opt.Source, "collect")
	b.SetInit(history.InitImplicit, -1)
	// T⊥ holds the empty list on every key used as a list, as a JSONL
	// file's init "zero" says, leaves every row absent (the empty value:
	// a key inserted, deleted, read absent or in a range read), and holds
	// 0 on every other key.
	for _, rec := range r.records {
		for _, op := range rec.ops {
			if op.kind == history.OpAppend || op.kind == history.OpReadList || op.src == history.SrcInsert ||
				op.src == history.SrcDelete || op.kind == history.OpRead && op.src == history.SrcPlain && op.val == history.EmptyList {
				b.InitWrite(op.key, history.EmptyList)
			}
		}
	}
	b.InitSelected(history.EmptyList)
	b.InitAllKeys(0)
	all := r.records
	// Stable: a session's records keep their order.
	slices.SortStableFunc(all, func(a, b record) int { return cmp.Compare(a.session, b.session) })
	for i, rec := range all {
		t := b.Begin(b.Session(rec.session), int64(i)+1, rec.status, history.Pos{})
		if l := r.level(rec); l != history.LevelNone {
			b.SetLevel(t, l)
		}
		if r.opt.Times {
			b.SetInterval(t, rec.start, rec.end)
		}
		for _, op := range rec.ops {
			switch {
			case op.src == history.SrcInsert:
				b.Insert(t, op.key, op.val)
			case op.src == history.SrcDelete:
				b.Delete(t, op.key)
			case op.src == history.SrcSelect:
				b.SelectID(t, op.key, op.hi, versions(b, op.rows))
			case op.kind == history.OpWrite:
				b.Write(t, op.key, op.val)
			case op.kind == history.OpAppend:
				b.Append(t, op.key, op.val)
			case op.kind == history.OpReadList:
				b.ReadList(t, op.key, op.list, history.EmptyList)
			default:
				b.Read(t, op.key, op.val)
			}
		}
	}
	for k, v := range meta(r.st, w, r.opt) {
		b.SetMeta(k, v)
	}
	if log := r.faultLog(); log != "" {
		b.SetMeta("fault_log", log)
	}
	return b.Finish()
}

// versions interns a range read's rows for Builder.SelectID.
func versions(b *history.Builder, rows []Row) []history.Version {
	out := make([]history.Version, len(rows))
	for i, row := range rows {
		k := b.KeyID(row.Key)
		out[i] = history.Version{Key: k, Value: b.ValueID(k, row.Val)}
	}
	return out
}
