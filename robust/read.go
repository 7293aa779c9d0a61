package robust

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
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
	Name    *string           `json:"name"`
	Type    string            `json:"type,omitempty"`
	Program string            `json:"program,omitempty"`
	Args    map[string]string `json:"args,omitempty"`
	Reads   []string          `json:"reads"`
	Writes  []string          `json:"writes"`
	Level   string            `json:"level,omitempty"`
	After   *string           `json:"after,omitempty"`
}

// programJSON is one element of "programs": read and write sets with
// parameters, which instances bind.
type programJSON struct {
	Name   *string  `json:"name"`
	Params []string `json:"params"`
	Reads  []string `json:"reads"`
	Writes []string `json:"writes"`
}

const (
	instanceFields = "name, type, program, args, reads, writes, level, after"
	programFields  = "name, params, reads, writes"
	topFields      = `"workload", "meta", "programs" and "instances"`
)

// rawInstance and rawProgram are decoded entries with their positions:
// what the JSON and YAML readers hand to build.
type rawInstance struct {
	instanceJSON
	pos Pos
	// field locates a field (the entry itself when it has none).
	field func(f string) Pos
}

type rawProgram struct {
	programJSON
	pos   Pos
	field func(f string) Pos
}

// Parse reads a workload in the JSON or YAML format of docs/robustness.md
// from r; name is the file name errors give. A file whose first
// character is '{' is JSON, any other YAML. Reading is strict: unknown
// fields, unknown levels, instances without keys, duplicate names and a
// session order that is not a union of chains are errors naming the
// position.
func Parse(r io.Reader, name string) (*Workload, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxInput+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxInput {
		return nil, &InputError{Pos{File: name}, fmt.Sprintf("larger than %d bytes", maxInput)}
	}
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return parseYAML(data, name)
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
	var (
		seen  = map[string]bool{}
		raw   []rawInstance
		progs []rawProgram
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
			err := p.entries("instances", instanceFields, func() any { return new(instanceJSON) }, func(v any, pos Pos, field func(string) Pos) {
				raw = append(raw, rawInstance{*v.(*instanceJSON), pos, field})
			})
			if err != nil {
				return nil, err
			}
		case "programs":
			err := p.entries("programs", programFields, func() any { return new(programJSON) }, func(v any, pos Pos, field func(string) Pos) {
				progs = append(progs, rawProgram{*v.(*programJSON), pos, field})
			})
			if err != nil {
				return nil, err
			}
		default:
			return nil, p.errAt(off, "unknown field %q (a workload has %s)", field, topFields)
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
	return build(p.name, progs, raw)
}

// entries decodes an array of objects (what: its field's name), each
// strictly into a fresh value from mk, and hands it to add with its
// position and a locator of its fields.
func (p *parser) entries(what, fields string, mk func() any, add func(v any, pos Pos, field func(string) Pos)) error {
	if err := p.delim('[', "an array of "+what); err != nil {
		return err
	}
	for p.dec.More() {
		ioff := p.dec.InputOffset()
		var rm json.RawMessage
		if err := p.dec.Decode(&rm); err != nil {
			return p.jsonErr(ioff, err)
		}
		v := mk()
		d := json.NewDecoder(bytes.NewReader(rm))
		d.DisallowUnknownFields()
		if err := d.Decode(v); err != nil {
			return p.instanceErr(ioff, rm, err, fields)
		}
		start := p.skip(ioff)
		add(v, p.at(start), func(f string) Pos {
			if j := fieldIndex(rm, f); j >= 0 {
				return p.at(start + int64(j))
			}
			return p.at(start)
		})
	}
	return p.delim(']', "end of the "+what+" array")
}

// instanceErr positions an error decoding one instance (rm, at offset
// off) inside it.
func (p *parser) instanceErr(off int64, rm json.RawMessage, err error, fields string) error {
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
			return &InputError{p.at(off + int64(i)), fmt.Sprintf("unknown field %s (fields: %s)", f, fields)}
		}
		return &InputError{p.at(off), fmt.Sprintf("unknown field %s (fields: %s)", f, fields)}
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

// trailing reports whether anything but whitespace follows the object.
func (p *parser) trailing() bool {
	_, err := p.dec.Token()
	return err != io.EOF
}
