package apps

import "github.com/hyperiso/hyperiso/collect/workload"

// WritesBound is the bound on the groups one transaction of w writes.
func WritesBound(w *workload.Workload) int64 { return w.App().(*app).writes }
