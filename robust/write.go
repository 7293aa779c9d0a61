package robust

import (
	"encoding/json"
	"io"
)

// Write writes w in the workload file format (docs/robustness.md), one
// instance per line; Parse reads it back to the same instances, levels and
// sessions.
func Write(out io.Writer, w *Workload) error {
	if _, err := io.WriteString(out, "{\"workload\": 1,\n\"instances\": [\n"); err != nil {
		return err
	}
	for i := range w.Instances {
		p := &w.Instances[i]
		in := instanceJSON{Name: &p.Name, Reads: []string{}, Writes: []string{}}
		if p.Type != p.Name {
			in.Type = p.Type
		}
		for _, k := range p.Reads {
			in.Reads = append(in.Reads, w.Keys[k])
		}
		for _, k := range p.Writes {
			in.Writes = append(in.Writes, w.Keys[k])
		}
		in.Level = p.Level.String()
		if q := w.prev(int32(i)); q >= 0 {
			in.After = &w.Instances[q].Name
		}
		line, err := json.Marshal(in)
		if err != nil {
			return err
		}
		if i+1 < len(w.Instances) {
			line = append(line, ',')
		}
		if _, err := out.Write(append(line, '\n')); err != nil {
			return err
		}
	}
	_, err := io.WriteString(out, "]}\n")
	return err
}
