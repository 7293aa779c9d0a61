package robust

import (
	"encoding/json"
	"io"
)

// Write writes w in the workload file format (docs/robustness.md), one
// instance per line, keys as the instance names them (a bound program key
// as the concrete key it spells, braces escaped); Parse reads it back to
// the same instances, levels and sessions.
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
		for _, k := range explicit(p.Reads, p.MayReads) {
			in.Reads = append(in.Reads, w.keyText(k))
		}
		for _, k := range explicit(p.Writes, p.MayWrites) {
			in.Writes = append(in.Writes, w.keyText(k))
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
