package viper

import (
	"github.com/hyperiso/hyperiso/history"
)

// The fast path reads the lines Viper writes — {"value": [["r", k, v,
// flag], …]} with integer keys and values, plain field names and at most
// an "isInitial" boolean — without encoding/json, whose reflection and
// allocation per element made this the slowest reader. It accepts only
// lines the general path (decodeTxnLine, mop) would read without a
// warning, and gives up on anything else, before touching the builder:
// the general path then reads the line and says what is wrong with it.

// fastOp is one micro-operation the fast path read: kind 'r' (a read; val
// is history.EmptyList for nil), 'w' (a write) or 'a' (a write that did not
// take effect).
type fastOp struct {
	kind     byte
	key, val int64
}

// fastLine is what the fast path read of one line.
type fastLine struct {
	ops     []fastOp
	initial bool // "isInitial": true
}

// fastScan is a cursor over one line.
type fastScan struct {
	b []byte
	i int
}

func (s *fastScan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// lit consumes lit after white space.
func (s *fastScan) lit(lit string) bool {
	s.ws()
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return false
	}
	s.i += len(lit)
	return true
}

// peek returns the next byte after white space, 0 at the end.
func (s *fastScan) peek() byte {
	s.ws()
	if s.i == len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// integer reads a JSON integer that fits in 64 bits: what encoding/json
// takes as a number and strconv.ParseInt as an integer. A fraction, an
// exponent or an overflow is left to the general path.
func (s *fastScan) integer() (int64, bool) {
	s.ws()
	neg := false
	if s.i < len(s.b) && s.b[s.i] == '-' {
		neg = true
		s.i++
	}
	start := s.i
	var u uint64
	for s.i < len(s.b) {
		c := s.b[s.i] - '0'
		if c > 9 {
			break
		}
		if u > (1<<63)/10 {
			return 0, false
		}
		u = u*10 + uint64(c)
		s.i++
	}
	n := s.i - start
	if n == 0 || (n > 1 && s.b[start] == '0') || n > 19 {
		return 0, false
	}
	if s.i < len(s.b) {
		if c := s.b[s.i]; c == '.' || c == 'e' || c == 'E' {
			return 0, false
		}
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}

// boolean reads true or false.
func (s *fastScan) boolean() (bool, bool) {
	switch s.peek() {
	case 't':
		return true, s.lit("true")
	case 'f':
		return false, s.lit("false")
	}
	return false, false
}

// scanFast reads line into l (reusing its slice) and reports whether the
// line has the common shape; when it does not, l means nothing.
func scanFast(line []byte, l *fastLine) bool {
	s := fastScan{b: line}
	l.ops, l.initial = l.ops[:0], false
	if !s.lit("{") {
		return false
	}
	haveValue, haveInit := false, false
	for first := true; ; first = false {
		if s.peek() == '}' && !first {
			s.i++
			break
		}
		if !first && !s.lit(",") {
			return false
		}
		switch {
		case !haveValue && s.lit(`"value"`):
			if !s.lit(":") || !s.ops(l) {
				return false
			}
			haveValue = true
		case !haveInit && s.lit(`"isInitial"`):
			v, ok := false, s.lit(":")
			if ok {
				v, ok = s.boolean()
			}
			if !ok {
				return false
			}
			l.initial, haveInit = v, true
		default:
			return false
		}
	}
	s.ws()
	return haveValue && s.i == len(s.b)
}

// ops reads the array of micro-operations.
func (s *fastScan) ops(l *fastLine) bool {
	if !s.lit("[") {
		return false
	}
	if s.peek() == ']' {
		s.i++
		return true
	}
	for {
		var op fastOp
		if !s.lit("[") {
			return false
		}
		switch {
		case s.lit(`"r"`):
			op.kind = 'r'
		case s.lit(`"w"`):
			op.kind = 'w'
		default:
			return false
		}
		var ok bool
		if !s.lit(",") {
			return false
		}
		if op.key, ok = s.integer(); !ok || !s.lit(",") {
			return false
		}
		switch c := s.peek(); {
		case op.kind == 'r' && c == 'n':
			op.val, ok = history.EmptyList, s.lit("null")
		case op.kind == 'r' && c == '"':
			op.val, ok = history.EmptyList, s.lit(`"nil"`)
		default:
			op.val, ok = s.integer()
			ok = ok && op.val != history.EmptyList
		}
		if !ok || !s.lit(",") {
			return false
		}
		flag, ok := s.boolean()
		if !ok || !s.lit("]") {
			return false
		}
		switch {
		case op.kind == 'w' && !flag:
			op.kind = 'a'
		case op.kind == 'r' && flag: // a dead row: absent (rows.go)
			op.val = history.EmptyList
		}
		l.ops = append(l.ops, op)
		if s.peek() == ']' {
			s.i++
			return true
		}
		if !s.lit(",") {
			return false
		}
	}
}
