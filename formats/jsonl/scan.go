package jsonl

import (
	"fmt"
	"math"
	"unicode/utf16"
	"unicode/utf8"
)

// scanner reads JSON values from one line. It is hand-written rather than
// encoding/json so that integers never pass through float64 (keys and
// values are full int64 hashes) and so that reading allocates almost
// nothing per operation. The first error sticks: after it every method
// reports failure and the caller abandons the line.
type scanner struct {
	s   []byte
	i   int
	err *scanErr
	tmp []byte // unescaped string contents, valid until the next str call
}

type scanErr struct {
	col int // 1-based byte column
	msg string
}

func (sc *scanner) reset(line []byte) {
	sc.s, sc.i, sc.err = line, 0, nil
}

func (sc *scanner) fail(format string, args ...any) bool {
	if sc.err == nil {
		sc.err = &scanErr{col: sc.i + 1, msg: fmt.Sprintf(format, args...)}
	}
	return false
}

// wrap prefixes the error with the operation it occurred in; it keeps the
// hot path free of message formatting.
func (sc *scanner) wrap(op int) bool {
	if sc.err != nil {
		sc.err.msg = fmt.Sprintf("ops[%d] %s", op, sc.err.msg)
	}
	return false
}

func (sc *scanner) ws() {
	for sc.i < len(sc.s) {
		switch sc.s[sc.i] {
		case ' ', '\t', '\r', '\n':
			sc.i++
		default:
			return
		}
	}
}

// peek returns the next byte, or 0 at the end of the line.
func (sc *scanner) peek() byte {
	if sc.i < len(sc.s) {
		return sc.s[sc.i]
	}
	return 0
}

// found describes the token at the cursor for "expected X, found Y" messages.
func (sc *scanner) found() string {
	if sc.i >= len(sc.s) {
		return "end of line"
	}
	c := sc.s[sc.i]
	switch {
	case c == '"':
		return "a string"
	case c == '[':
		return "an array"
	case c == '{':
		return "an object"
	case c == '-' || c >= '0' && c <= '9':
		return "a number"
	case sc.has("true") || sc.has("false"):
		return "a boolean"
	case sc.has("null"):
		return "null"
	case c < 0x20 || c >= 0x7f:
		return fmt.Sprintf("byte %#02x", c)
	}
	return fmt.Sprintf("%q", c)
}

func (sc *scanner) expect(c byte, what string) bool {
	if sc.i < len(sc.s) && sc.s[sc.i] == c {
		sc.i++
		return true
	}
	return sc.fail("expected %s, found %s", what, sc.found())
}

// has reports whether word is next.
func (sc *scanner) has(word string) bool {
	return len(sc.s)-sc.i >= len(word) && string(sc.s[sc.i:sc.i+len(word)]) == word
}

// literal consumes one of true, false, null.
func (sc *scanner) literal(word string) bool {
	if sc.has(word) {
		sc.i += len(word)
		return true
	}
	return sc.fail("invalid literal, expected %s", word)
}

// boolean reads true or false.
func (sc *scanner) boolean(what string) (bool, bool) {
	switch sc.peek() {
	case 't':
		return true, sc.literal("true")
	case 'f':
		return false, sc.literal("false")
	}
	return false, sc.fail("%s: expected true or false, found %s", what, sc.found())
}

// integer reads a JSON number that must be an integer within int64.
func (sc *scanner) integer(what string) (int64, bool) {
	s, start := sc.s, sc.i
	i := start
	neg := i < len(s) && s[i] == '-'
	if neg {
		i++
	}
	if i >= len(s) || s[i] < '0' || s[i] > '9' {
		return 0, sc.fail("%s: expected an integer, found %s", what, sc.found())
	}
	limit := uint64(math.MaxInt64)
	if neg {
		limit++
	}
	var u uint64
	over := false
	if s[i] == '0' {
		i++
	} else {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			d := uint64(s[i] - '0')
			if u > (limit-d)/10 {
				over = true
			} else {
				u = u*10 + d
			}
			i++
		}
	}
	if i < len(s) {
		switch c := s[i]; {
		case c == '.' || c == 'e' || c == 'E':
			end := i
			for end < len(s) && (s[end] == '.' || s[end] == 'e' || s[end] == 'E' || s[end] == '+' || s[end] == '-' || s[end] >= '0' && s[end] <= '9') {
				end++
			}
			return 0, sc.fail("%s: expected an integer, found %s", what, s[start:end])
		case c >= '0' && c <= '9':
			return 0, sc.fail("%s: a JSON number must not have a leading zero", what)
		}
	}
	if over {
		return 0, sc.fail("%s: %s is out of the int64 range", what, s[start:i])
	}
	sc.i = i
	if neg {
		return int64(-u), true // -1<<63 wraps correctly
	}
	return int64(u), true
}

// str reads a JSON string and returns its contents; the slice aliases the
// line or sc.tmp and is valid until the next call. The line was checked to
// be UTF-8 before scanning.
func (sc *scanner) str(what string) ([]byte, bool) {
	if sc.peek() != '"' {
		return nil, sc.fail("%s: expected a string, found %s", what, sc.found())
	}
	s := sc.s
	i := sc.i + 1
	start := i
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			sc.i = i + 1
			return s[start:i], true
		case c == '\\':
			return sc.strSlow(what, start, i)
		case c < 0x20:
			sc.i = i
			return nil, sc.fail("%s: control character %#02x in a string must be escaped", what, c)
		}
		i++
	}
	sc.i = i
	return nil, sc.fail("%s: unterminated string", what)
}

func (sc *scanner) strSlow(what string, start, i int) ([]byte, bool) {
	s := sc.s
	out := append(sc.tmp[:0], s[start:i]...)
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			sc.i = i + 1
			sc.tmp = out
			return out, true
		case c < 0x20:
			sc.i = i
			return nil, sc.fail("%s: control character %#02x in a string must be escaped", what, c)
		case c != '\\':
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(s) {
			break
		}
		e := s[i+1]
		i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(s, i)
			if !ok {
				sc.i = i
				return nil, sc.fail(`%s: expected 4 hex digits after \u`, what)
			}
			i += 4
			if utf16.IsSurrogate(r) {
				r2, ok := rune(-1), false
				if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					r2, ok = hex4(s, i+2)
				}
				if dec := utf16.DecodeRune(r, r2); ok && dec != utf8.RuneError {
					r = dec
					i += 6
				} else {
					r = utf8.RuneError // a lone surrogate, as encoding/json does
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			sc.i = i - 1
			return nil, sc.fail("%s: invalid escape \\%c", what, e)
		}
	}
	sc.i = len(s)
	return nil, sc.fail("%s: unterminated string", what)
}

func hex4(s []byte, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range s[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// maxDepth bounds nesting in skipped values so that hostile input cannot
// exhaust the stack.
const maxDepth = 200

// skip consumes any JSON value (used for unknown fields in lenient mode).
func (sc *scanner) skip(depth int) bool {
	if depth > maxDepth {
		return sc.fail("value nested more than %d deep", maxDepth)
	}
	switch c := sc.peek(); {
	case c == '"':
		_, ok := sc.str("value")
		return ok
	case c == 't':
		return sc.literal("true")
	case c == 'f':
		return sc.literal("false")
	case c == 'n':
		return sc.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return sc.number()
	case c == '[':
		sc.i++
		sc.ws()
		if sc.peek() == ']' {
			sc.i++
			return true
		}
		for {
			sc.ws()
			if !sc.skip(depth + 1) {
				return false
			}
			sc.ws()
			if sc.peek() == ']' {
				sc.i++
				return true
			}
			if !sc.expect(',', "',' or ']'") {
				return false
			}
		}
	case c == '{':
		sc.i++
		sc.ws()
		if sc.peek() == '}' {
			sc.i++
			return true
		}
		for {
			sc.ws()
			if _, ok := sc.str("field name"); !ok {
				return false
			}
			sc.ws()
			if !sc.expect(':', "':'") {
				return false
			}
			sc.ws()
			if !sc.skip(depth + 1) {
				return false
			}
			sc.ws()
			if sc.peek() == '}' {
				sc.i++
				return true
			}
			if !sc.expect(',', "',' or '}'") {
				return false
			}
		}
	}
	return sc.fail("expected a JSON value, found %s", sc.found())
}

// number consumes any JSON number.
func (sc *scanner) number() bool {
	s, i := sc.s, sc.i
	digits := func() bool {
		n := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i > n
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else if !digits() {
		sc.i = i
		return sc.fail("invalid number")
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			sc.i = i
			return sc.fail("invalid number")
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			sc.i = i
			return sc.fail("invalid number")
		}
	}
	sc.i = i
	return true
}
