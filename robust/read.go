package robust

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hyperiso/hyperiso/history"
)

// FormatVersion is the version a workload file's "workload" field holds.
const FormatVersion = 1

// maxInput bounds what Parse reads: a workload file is read whole.
const maxInput = 1 << 30

// InputError is a workload file that cannot be read: where, and why.
type InputError struct {
	Pos Pos
	Msg string
}

func (e *InputError) Error() string { return e.Pos.String() + ": " + e.Msg }

// ReadFile reads a workload file (docs/robustness.md).
func ReadFile(path string) (*Workload, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f, path)
}

// instanceJSON is one element of "instances".
type instanceJSON struct {
	Name   *string  `json:"name"`
	Type   string   `json:"type,omitempty"`
	Reads  []string `json:"reads"`
	Writes []string `json:"writes"`
	Level  string   `json:"level,omitempty"`
	After  *string  `json:"after,omitempty"`
}

// Parse reads a workload in the JSON format of docs/robustness.md from r;
// name is the file name errors give. Reading is strict: unknown fields,
// unknown levels, instances without keys, duplicate names and a session
// order that is not a union of chains are errors naming the position.
func Parse(r io.Reader, name string) (*Workload, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxInput+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxInput {
		return nil, &InputError{Pos{File: name}, fmt.Sprintf("larger than %d bytes", maxInput)}
	}
	p := &parser{data: data, name: name, dec: json.NewDecoder(bytes.NewReader(data))}
	return p.parse()
}

type parser struct {
	data []byte
	name string
	dec  *json.Decoder
}

// skip moves offset off past the whitespace and separators before the
// value that starts there.
func (p *parser) skip(off int64) int64 {
	off = max(off, 0)
	for off < int64(len(p.data)) && strings.IndexByte(" \t\r\n,:", p.data[off]) >= 0 {
		off++
	}
	return off
}

// at returns the position of byte offset off (after skip).
func (p *parser) at(off int64) Pos {
	off = min(p.skip(off), int64(len(p.data)))
	line := 1 + bytes.Count(p.data[:off], []byte{'\n'})
	col := int(off) - bytes.LastIndexByte(p.data[:off], '\n')
	return Pos{File: p.name, Line: line, Col: col}
}

func (p *parser) errAt(off int64, format string, args ...any) error {
	return &InputError{p.at(off), fmt.Sprintf(format, args...)}
}

// jsonErr turns a decoding error into an InputError at its offset (or at
// off when the error has none).
func (p *parser) jsonErr(off int64, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return &InputError{p.at(se.Offset - 1), "invalid JSON: " + se.Error()}
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "value"
		}
		return &InputError{p.at(te.Offset - 1), fmt.Sprintf("%s: expected %s, found JSON %s", field, te.Type, te.Value)}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &InputError{p.at(int64(len(p.data))), "unexpected end of input"}
	}
	return p.errAt(off, "%s", strings.TrimPrefix(err.Error(), "json: "))
}

func (p *parser) delim(want json.Delim, what string) error {
	off := p.dec.InputOffset()
	tok, err := p.dec.Token()
	if err != nil {
		return p.jsonErr(off, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return p.errAt(off, "expected %s", what)
	}
	return nil
}

func (p *parser) parse() (*Workload, error) {
	if err := p.delim('{', "a JSON object (a workload file is one object with \"instances\")"); err != nil {
		return nil, err
	}
	b := newBuilder(p.name)
	var (
		seen = map[string]bool{}
		raw  []instanceJSON
		offs []int64
		rms  []json.RawMessage
	)
	for p.dec.More() {
		off := p.dec.InputOffset()
		tok, err := p.dec.Token()
		if err != nil {
			return nil, p.jsonErr(off, err)
		}
		field, _ := tok.(string)
		if seen[field] {
			return nil, p.errAt(off, "field %q given twice", field)
		}
		seen[field] = true
		switch field {
		case "workload":
			voff := p.dec.InputOffset()
			var v int
			if err := p.dec.Decode(&v); err != nil {
				return nil, p.jsonErr(voff, err)
			}
			if v != FormatVersion {
				return nil, p.errAt(voff, "workload format version %d; this hyperiso reads version %d", v, FormatVersion)
			}
		case "meta":
			voff := p.dec.InputOffset()
			var m map[string]string
			if err := p.dec.Decode(&m); err != nil {
				return nil, p.jsonErr(voff, err)
			}
		case "instances":
			if err := p.delim('[', "an array of instances"); err != nil {
				return nil, err
			}
			for p.dec.More() {
				ioff := p.dec.InputOffset()
				var in instanceJSON
				var rm json.RawMessage
				if err := p.dec.Decode(&rm); err != nil {
					return nil, p.jsonErr(ioff, err)
				}
				d := json.NewDecoder(bytes.NewReader(rm))
				d.DisallowUnknownFields()
				if err := d.Decode(&in); err != nil {
					return nil, p.instanceErr(ioff, rm, err)
				}
				raw = append(raw, in)
				offs = append(offs, p.skip(ioff))
				rms = append(rms, rm)
			}
			if err := p.delim(']', "end of the instances array"); err != nil {
				return nil, err
			}
		default:
			return nil, p.errAt(off, "unknown field %q (a workload has \"workload\", \"meta\" and \"instances\")", field)
		}
	}
	if err := p.delim('}', "end of the workload object"); err != nil {
		return nil, err
	}
	if off := p.dec.InputOffset(); p.trailing() {
		return nil, p.errAt(off, "data after the workload object")
	}
	if !seen["instances"] {
		return nil, &InputError{Pos{File: p.name}, "no \"instances\" field"}
	}
	if err := p.build(b, raw, offs, rms); err != nil {
		return nil, err
	}
	return b.w, nil
}

// instanceErr positions an error decoding one instance (rm, at offset
// off) inside it.
func (p *parser) instanceErr(off int64, rm json.RawMessage, err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "instance"
		}
		at := te.Offset - 1
		if j := fieldIndex(rm, strings.SplitN(te.Field, ".", 2)[0]); j >= 0 {
			at = int64(j)
		}
		return &InputError{p.at(off + at), fmt.Sprintf("%s: expected %s, found JSON %s", field, te.Type, te.Value)}
	case errors.As(err, &se):
		return &InputError{p.at(off + se.Offset - 1), "invalid JSON: " + se.Error()}
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if f, ok := strings.CutPrefix(msg, "unknown field "); ok {
		// Point at the field itself.
		if i := fieldIndex(rm, strings.Trim(f, `"`)); i >= 0 {
			return &InputError{p.at(off + int64(i)), fmt.Sprintf("unknown field %s in an instance (fields: name, type, reads, writes, level, after)", f)}
		}
		return &InputError{p.at(off), fmt.Sprintf("unknown field %s in an instance (fields: name, type, reads, writes, level, after)", f)}
	}
	return &InputError{p.at(off), msg}
}

// fieldIndex returns where field f's name starts in the JSON object rm,
// or -1: the first occurrence of "f" followed by a colon (a string value
// equal to "f" is not).
func fieldIndex(rm []byte, f string) int {
	name := []byte(`"` + f + `"`)
	for from := 0; ; {
		j := bytes.Index(rm[from:], name)
		if j < 0 {
			return -1
		}
		j += from
		if rest := bytes.TrimLeft(rm[j+len(name):], " \t\r\n"); len(rest) > 0 && rest[0] == ':' {
			return j
		}
		from = j + len(name)
	}
}

// build checks the decoded instances and assembles the workload.
func (p *parser) build(b *builder, raw []instanceJSON, offs []int64, rms []json.RawMessage) error {
	// field locates instance i's field f, or the instance.
	field := func(i int, f string) Pos {
		if j := fieldIndex(rms[i], f); j >= 0 {
			return p.at(offs[i] + int64(j))
		}
		return p.at(offs[i])
	}
	byName := make(map[string]int32, len(raw))
	for i, in := range raw {
		pos := p.at(offs[i])
		if in.Name == nil || *in.Name == "" {
			return &InputError{pos, fmt.Sprintf("instance %d has no name", i+1)}
		}
		name := *in.Name
		if j, dup := byName[name]; dup {
			return &InputError{pos, fmt.Sprintf("instance %q is named twice (first at %s)", name, b.w.Instances[j].Pos)}
		}
		if len(in.Reads) == 0 && len(in.Writes) == 0 {
			return &InputError{pos, fmt.Sprintf("instance %q has no keys: it must read or write at least one", name)}
		}
		for _, k := range append(append([]string(nil), in.Reads...), in.Writes...) {
			if k == "" {
				return &InputError{pos, fmt.Sprintf("instance %q has an empty key", name)}
			}
		}
		level := history.LevelNone
		if in.Level != "" {
			l, ok := history.ParseLevel(in.Level)
			if !ok || !Supported(l) {
				return &InputError{field(i, "level"), fmt.Sprintf("instance %q: unknown level %q (robustness knows %s)", name, in.Level, SupportedList(", "))}
			}
			level = l
		}
		typ := in.Type
		if typ == "" {
			typ = name
		}
		id := b.add(name, typ, in.Reads, in.Writes, level)
		b.w.Instances[id].Pos = pos
		byName[name] = id
	}
	afterPos := make([]Pos, len(raw))
	for i := range raw {
		afterPos[i] = field(i, "after")
	}
	return p.sessions(b, raw, byName, afterPos)
}

// sessions turns the "after" links into sessions: each instance follows
// at most one, is followed by at most one, and the links form no cycle.
func (p *parser) sessions(b *builder, raw []instanceJSON, byName map[string]int32, afterPos []Pos) error {
	n := len(raw)
	prev := make([]int32, n)
	next := make([]int32, n)
	for i := range prev {
		prev[i], next[i] = -1, -1
	}
	ins := b.w.Instances
	for i, in := range raw {
		if in.After == nil {
			continue
		}
		j, ok := byName[*in.After]
		switch {
		case !ok:
			return &InputError{afterPos[i], fmt.Sprintf("instance %q comes after %q, which no instance is named", ins[i].Name, *in.After)}
		case int(j) == i:
			return &InputError{afterPos[i], fmt.Sprintf("cycle in session order: instance %q comes after itself", ins[i].Name)}
		case next[j] >= 0:
			return &InputError{afterPos[i], fmt.Sprintf("session order is not a chain: both %q and %q come right after %q", ins[next[j]].Name, ins[i].Name, ins[j].Name)}
		}
		prev[i], next[j] = j, int32(i)
	}
	done := make([]bool, n)
	for i := range n {
		if prev[i] >= 0 || next[i] < 0 {
			continue
		}
		var ids []int32
		for k := int32(i); k >= 0; k = next[k] {
			ids = append(ids, k)
			done[k] = true
		}
		b.session(ids)
	}
	// Instances linked but never reached from a chain's head lie on a
	// cycle (every one has a predecessor).
	for i := range n {
		if done[i] || (prev[i] < 0 && next[i] < 0) {
			continue
		}
		names := []string{ins[i].Name}
		for k := prev[i]; k != int32(i) && len(names) <= 10; k = prev[k] {
			names = append(names, ins[k].Name)
		}
		return &InputError{afterPos[i], fmt.Sprintf("cycle in session order: %s", strings.Join(append(names, ins[i].Name), " comes after "))}
	}
	return nil
}

// trailing reports whether anything but whitespace follows the object.
func (p *parser) trailing() bool {
	_, err := p.dec.Token()
	return err != io.EOF
}
