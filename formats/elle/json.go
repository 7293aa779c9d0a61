package elle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"unicode/utf8"

	"github.com/hyperiso/hyperiso/history"
)

// elle-cli's JSON syntax.

// decodeJSON reads elle-cli's JSON: one array of objects, or a sequence of
// objects (one per line). Each object is decoded on its own so that it keeps
// its line.
func (p *parser) decodeJSON(data []byte) error {
	ln := &lines{data: data, line: 1}
	// encoding/json turns invalid UTF-8 into U+FFFD silently, so that a
	// corrupted byte in a field name or a value would go unnoticed.
	if !utf8.Valid(data) {
		at := invalidUTF8(data)
		pos := p.pos(ln.at(at))
		msg := fmt.Sprintf("byte %d: not valid UTF-8", at)
		if !p.opt.Lenient {
			return history.Errorf(pos, "%s", msg)
		}
		p.warn("syntax", pos, msg+" (read as U+FFFD)")
	}
	inArray, arrayLine := false, 0
	off := 0
	for {
		off = skipJSONSpace(data, off)
		if off >= len(data) {
			if inArray {
				pos := p.pos(arrayLine)
				if !p.opt.Lenient {
					return history.Errorf(pos, "JSON syntax error: the array opened here is not closed")
				}
				p.warn("syntax", pos, "the array opened here is not closed")
			}
			return nil
		}
		switch c := data[off]; {
		case c == '[' && !inArray:
			inArray, arrayLine = true, ln.at(off)
			off++
			continue
		case c == ']' && inArray:
			inArray = false
			off++
			continue
		case c == ',' && inArray:
			off++
			continue
		}
		line := ln.at(off)
		dec := json.NewDecoder(bytes.NewReader(data[off:]))
		dec.UseNumber()
		var x any
		if err := dec.Decode(&x); err != nil {
			at := off + int(dec.InputOffset())
			var se *json.SyntaxError
			if errors.As(err, &se) {
				at = off + int(se.Offset) - 1
			}
			at = min(max(at, off), len(data)-1)
			msg := fmt.Sprintf("JSON syntax error: %v", jsonErr(err))
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				at = off
				msg += " (the value starts here)"
			}
			pos := p.pos(ln.at(at))
			if !p.opt.Lenient {
				return history.Errorf(pos, "%s", msg)
			}
			p.warn("syntax", pos, msg+"; skipped to the next line")
			off = nextLine(data, at)
			continue
		}
		off += int(dec.InputOffset())
		m, ok := x.(map[string]any)
		if !ok {
			pos := p.pos(line)
			desc := convertJSON(x).describe()
			if !p.opt.Lenient {
				return history.Errorf(pos, "expected an operation object {\"type\": ..., \"process\": ..., \"value\": ...}, found %s", desc)
			}
			p.warn("syntax", pos, "expected an operation object, found "+desc+"; skipped")
			continue
		}
		op := rawOp{line: line, ord: len(p.ops)}
		for k, v := range m {
			op.setField(k, convertJSON(v))
		}
		p.ops = append(p.ops, op)
	}
}

func jsonErr(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

func skipJSONSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// int64Max is the completion time of a transaction whose effect may come at
// any later time (:info, never completed).
const int64Max = math.MaxInt64

// invalidUTF8 returns the offset of the first byte of data that is not
// valid UTF-8.
func invalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(data)
}
