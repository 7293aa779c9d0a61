package robust

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"

	yaml "go.yaml.in/yaml/v3"
)

// parseYAML reads a workload written in YAML: the same fields as the JSON
// format, as mappings and sequences; positions are the YAML nodes' lines
// and columns.
func parseYAML(data []byte, name string) (w *Workload, err error) {
	y := &yamlReader{name: name}
	defer func() {
		// The YAML library is not ours: a panic in it is bad input, not a
		// crash.
		if r := recover(); r != nil {
			w, err = nil, &InputError{Pos{File: name}, fmt.Sprintf("invalid YAML: %v", r)}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &InputError{Pos{File: name}, "empty workload file (a workload is an object with \"instances\")"}
		}
		return nil, y.libErr(err)
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, y.libErr(err)
		}
		at := &more
		if len(more.Content) > 0 {
			at = more.Content[0]
		}
		return nil, y.errAt(at, "data after the workload (a second YAML document)")
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	root = deref(root)
	if root.Kind != yaml.MappingNode {
		return nil, y.errAt(root, "expected a mapping (a workload file is one object with \"instances\")")
	}
	var (
		raw   []rawInstance
		progs []rawProgram
		seen  = map[string]bool{}
	)
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], deref(root.Content[i+1])
		field := k.Value
		if seen[field] {
			return nil, y.errAt(k, "field %q given twice", field)
		}
		seen[field] = true
		switch field {
		case "workload":
			n, err := strconv.Atoi(v.Value)
			if v.Kind != yaml.ScalarNode || err != nil {
				return nil, y.errAt(v, "workload: expected the format version, an integer")
			}
			if n != FormatVersion {
				return nil, y.errAt(v, "workload format version %d; this hyperiso reads version %d", n, FormatVersion)
			}
		case "meta":
			if _, err := y.strMap(v, "meta"); err != nil {
				return nil, err
			}
		case "instances", "programs":
			if v.Kind != yaml.SequenceNode {
				return nil, y.errAt(v, "%s: expected a sequence", field)
			}
			for _, e := range v.Content {
				e = deref(e)
				if field == "instances" {
					in, err := y.instance(e)
					if err != nil {
						return nil, err
					}
					raw = append(raw, in)
					continue
				}
				pr, err := y.program(e)
				if err != nil {
					return nil, err
				}
				progs = append(progs, pr)
			}
		default:
			return nil, y.errAt(k, "unknown field %q (a workload has %s)", field, topFields)
		}
	}
	if !seen["instances"] {
		return nil, &InputError{Pos{File: name}, "no \"instances\" field"}
	}
	return build(name, progs, raw)
}

type yamlReader struct{ name string }

// deref follows aliases (the library bounds their expansion).
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func (y *yamlReader) pos(n *yaml.Node) Pos { return Pos{File: y.name, Line: n.Line, Col: n.Column} }

func (y *yamlReader) errAt(n *yaml.Node, format string, args ...any) error {
	return &InputError{y.pos(n), fmt.Sprintf(format, args...)}
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// libErr positions an error of the YAML library, which names a line.
func (y *yamlReader) libErr(err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &InputError{Pos{File: y.name, Line: line}, "invalid YAML: " + m[2]}
	}
	return &InputError{Pos{File: y.name}, "invalid YAML: " + msg}
}

// fields walks a mapping's fields, refusing unknown and repeated ones.
func (y *yamlReader) fields(n *yaml.Node, what, known string, set func(k, v *yaml.Node) (bool, error)) error {
	if n.Kind != yaml.MappingNode {
		return y.errAt(n, "expected a mapping (%s)", what)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], deref(n.Content[i+1])
		if seen[k.Value] {
			return y.errAt(k, "field %q given twice", k.Value)
		}
		seen[k.Value] = true
		ok, err := set(k, v)
		if err != nil {
			return err
		}
		if !ok {
			return y.errAt(k, "unknown field %q (fields: %s)", k.Value, known)
		}
	}
	return nil
}

func isNull(v *yaml.Node) bool { return v.Kind == yaml.ScalarNode && v.Tag == "!!null" }

func (y *yamlReader) str(v *yaml.Node, field string) (string, error) {
	if v.Kind != yaml.ScalarNode {
		return "", y.errAt(v, "%s: expected a string", field)
	}
	if isNull(v) {
		return "", nil
	}
	return v.Value, nil
}

func (y *yamlReader) strs(v *yaml.Node, field string) ([]string, error) {
	if isNull(v) {
		return nil, nil
	}
	if v.Kind != yaml.SequenceNode {
		return nil, y.errAt(v, "%s: expected a sequence of strings", field)
	}
	var out []string
	for _, e := range v.Content {
		e = deref(e)
		if e.Kind != yaml.ScalarNode || isNull(e) {
			return nil, y.errAt(e, "%s: expected a string", field)
		}
		out = append(out, e.Value)
	}
	return out, nil
}

func (y *yamlReader) strMap(v *yaml.Node, field string) (map[string]string, error) {
	if isNull(v) {
		return nil, nil
	}
	if v.Kind != yaml.MappingNode {
		return nil, y.errAt(v, "%s: expected a mapping of strings", field)
	}
	out := map[string]string{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, e := v.Content[i], deref(v.Content[i+1])
		if _, dup := out[k.Value]; dup {
			return nil, y.errAt(k, "%s: %q given twice", field, k.Value)
		}
		if e.Kind != yaml.ScalarNode || isNull(e) {
			return nil, y.errAt(e, "%s: expected a string", field)
		}
		out[k.Value] = e.Value
	}
	return out, nil
}

// locator returns a field locator for a mapping node.
func (y *yamlReader) locator(n *yaml.Node) func(string) Pos {
	return func(f string) Pos {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == f {
				return y.pos(n.Content[i])
			}
		}
		return y.pos(n)
	}
}

func (y *yamlReader) instance(n *yaml.Node) (rawInstance, error) {
	in := rawInstance{pos: y.pos(n), field: y.locator(n)}
	err := y.fields(n, "an instance", instanceFields, func(k, v *yaml.Node) (bool, error) {
		var err error
		var s string
		switch k.Value {
		case "name":
			s, err = y.str(v, "name")
			in.Name = &s
		case "type":
			in.Type, err = y.str(v, "type")
		case "program":
			in.Program, err = y.str(v, "program")
		case "args":
			in.Args, err = y.strMap(v, "args")
		case "reads":
			in.Reads, err = y.strs(v, "reads")
		case "writes":
			in.Writes, err = y.strs(v, "writes")
		case "level":
			in.Level, err = y.str(v, "level")
		case "after":
			if s, err = y.str(v, "after"); err == nil && !isNull(v) {
				in.After = &s
			}
		default:
			return false, nil
		}
		return true, err
	})
	return in, err
}

func (y *yamlReader) program(n *yaml.Node) (rawProgram, error) {
	pr := rawProgram{pos: y.pos(n), field: y.locator(n)}
	err := y.fields(n, "a program", programFields, func(k, v *yaml.Node) (bool, error) {
		var err error
		switch k.Value {
		case "name":
			var s string
			s, err = y.str(v, "name")
			pr.Name = &s
		case "params":
			pr.Params, err = y.strs(v, "params")
		case "reads":
			pr.Reads, err = y.strs(v, "reads")
		case "writes":
			pr.Writes, err = y.strs(v, "writes")
		default:
			return false, nil
		}
		return true, err
	})
	return pr, err
}
