package apps

import "github.com/hyperiso/hyperiso/collect/workload"

// WritesBound is the bound on the groups one transaction of w writes.
func WritesBound(w *workload.Workload) int64 { return w.App().(*app).writes }

// Columns lists the tables of the named application, each with its key
// columns, group names and columns.
func Columns(name string) map[string][]string {
	a := &app{name: name, cfg: workload.Config{Sessions: 1, Txns: 1}}
	if err := build(a, ""); err != nil {
		panic(err)
	}
	out := map[string][]string{}
	for _, t := range a.tables {
		names := t.keyNames()
		for _, g := range t.groups {
			names = append(names, g.name)
			names = append(names, g.cols...)
		}
		out[t.name] = names
	}
	return out
}
