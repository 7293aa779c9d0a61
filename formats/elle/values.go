package elle

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"olympos.io/encoding/edn"
)

// What the reader keeps of a decoded EDN or JSON value, and of one raw
// operation map, before the builder interprets it.

// kind is the kind of a decoded value, as far as the reader cares.
type kind uint8

const (
	vNil kind = iota
	vInt
	vBig // an integer outside int64 (E6)
	vKeyword
	vString
	vSymbol
	vVec // vector or list
	vMap // a map: elems are its keys and values, k0 v0 k1 v1 …, in key order
	vOther
)

// val is a decoded EDN or JSON value reduced to what the reader needs:
// integers, names, sequences; everything else is vOther with a description.
type val struct {
	k kind
	// lit says which EDN literal a vOther value is — a boolean (text in
	// s), a float (bits in n) or a character (rune in n) — which may be a
	// key or value; litNone for what may not (maps, sets, tags), whose
	// description is s. Kept in n and s rather than in a field of its own:
	// a large history holds millions of vals.
	lit   litKind
	n     int64
	s     string // keyword / string / symbol text, or a description
	elems []val
}

type litKind uint8

const (
	litNone litKind = iota
	litBool
	litFloat
	litChar
)

// literal returns the EDN text of a boolean, float or character, or "".
func (v val) literal() string {
	switch v.lit {
	case litBool:
		return v.s
	case litFloat:
		return floatLit(math.Float64frombits(uint64(v.n)))
	case litChar:
		return charLit(rune(v.n))
	}
	return ""
}

// otherDesc describes a vOther value.
func (v val) otherDesc() string {
	switch v.lit {
	case litFloat:
		return "the number " + strconv.FormatFloat(math.Float64frombits(uint64(v.n)), 'g', -1, 64)
	case litChar:
		return "a character"
	}
	return v.s
}

// quoteLimit bounds, in characters, any piece of the input a message quotes:
// a pathological value must not turn into a message as large as the file.
const quoteLimit = 80

// describe renders v for a message, at most quoteLimit characters and an
// ellipsis. It stops writing once full, so its cost does not depend on the
// size or nesting of v.
func (v val) describe() string {
	w := clipWriter{left: quoteLimit}
	v.describeTo(&w)
	return w.String()
}

func (v val) describeTo(w *clipWriter) {
	if w.full() {
		return
	}
	switch v.k {
	case vNil:
		w.WriteString("nil")
	case vInt:
		w.WriteString(strconv.FormatInt(v.n, 10))
	case vBig:
		w.WriteString("the integer ")
		w.WriteString(prefix(v.s, quoteLimit+1))
	case vKeyword:
		w.WriteString(":")
		w.WriteString(prefix(v.s, quoteLimit+1))
	case vString:
		// A prefix one character longer than the limit quotes to more
		// than the limit: the writer cuts it and says so.
		w.WriteString(strconv.Quote(prefix(v.s, quoteLimit+1)))
	case vSymbol:
		w.WriteString(prefix(v.s, quoteLimit+1))
	case vVec:
		w.WriteString("[")
		for i, e := range v.elems {
			if w.full() {
				return
			}
			if i > 0 {
				w.WriteString(" ")
			}
			if i == 8 {
				w.WriteString("…")
				break
			}
			e.describeTo(w)
		}
		w.WriteString("]")
	case vMap:
		w.WriteString("a map")
	default:
		w.WriteString(prefix(v.otherDesc(), quoteLimit+1))
	}
}

// clipWriter keeps the first left characters written to it and notes
// whether anything was cut.
type clipWriter struct {
	b    strings.Builder
	left int
	cut  bool
}

func (w *clipWriter) full() bool { return w.cut }

func (w *clipWriter) WriteString(s string) {
	if w.cut {
		return
	}
	for i := range s {
		if w.left == 0 {
			w.b.WriteString(s[:i])
			w.cut = true
			return
		}
		w.left--
	}
	w.b.WriteString(s)
}

func (w *clipWriter) String() string {
	if w.cut {
		return w.b.String() + "…"
	}
	return w.b.String()
}

// clip shortens s, a piece of the input quoted in a message, to quoteLimit
// characters and an ellipsis.
func clip(s string) string {
	w := clipWriter{left: quoteLimit}
	w.WriteString(prefix(s, quoteLimit+1))
	return w.String()
}

// prefix returns the first n characters of s (all of s if shorter), in
// O(n) whatever the length of s.
func prefix(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// name returns the text of a keyword or string.
func (v val) name() (string, bool) {
	if v.k == vKeyword || v.k == vString {
		return v.s, true
	}
	return "", false
}

// opType is the :type of an operation map.
type opType uint8

const (
	tInvoke opType = iota
	tOK
	tFail
	tInfo
)

var opTypeNames = [...]string{"invoke", "ok", "fail", "info"}

// rawOp is one operation map as decoded, before pairing. A large history
// holds one per line, so it is kept small: what a plain Jepsen operation
// does not have is behind odd, and a :value the fast path checked is not
// kept but decoded again when the builder needs it (parser.opValue).
type rawOp struct {
	line int
	ord  int // position among the operation maps of the file, from 0
	typ  opType
	// typeState: 0 missing, 1 valid, 2 present but not one of the four.
	typeState uint8
	hasProc   bool
	hasIndex  bool
	hasTime   bool
	hasValue  bool
	// procKind is the kind of :process: vInt once numberProcesses has
	// numbered the keyword and string ones.
	procKind kind
	proc     int64 // the integer process
	index    int64
	time     int64
	// valAt is where :value starts in the input when the fast path read
	// the map (0: it did not); value is the :value decoded otherwise.
	valAt int
	value *val
	odd   *oddFields
}

// oddFields are the parts of an operation map that are rare in Jepsen's
// histories, each described for messages.
type oddFields struct {
	typeDesc string // a :type that is not one of the four
	init     bool   // :f :init, Elle's closed-predicate universe (rows.go)
	fReason  string // ":f " and the :f, when it is not :txn
	procDesc string // a :process that is not an integer
}

func (op *rawOp) oddFields() *oddFields {
	if op.odd == nil {
		op.odd = &oddFields{}
	}
	return op.odd
}

// fReason says why op is skipped for its :f ("" if it is :txn, or if op
// has no :f).
func (op *rawOp) fReason() string {
	if op.odd == nil {
		return ""
	}
	return op.odd.fReason
}

// convertEDN reduces a value produced by the EDN decoder.
func convertEDN(x any) val {
	switch x := x.(type) {
	case nil:
		return val{k: vNil}
	case int64:
		return val{k: vInt, n: x}
	case big.Int:
		if x.IsInt64() {
			return val{k: vInt, n: x.Int64()}
		}
		return val{k: vBig, s: x.String()}
	case *big.Int:
		if x.IsInt64() {
			return val{k: vInt, n: x.Int64()}
		}
		return val{k: vBig, s: x.String()}
	case edn.Keyword:
		return val{k: vKeyword, s: string(x)}
	case string:
		return val{k: vString, s: x}
	case edn.Symbol:
		return val{k: vSymbol, s: string(x)}
	case []any:
		out := val{k: vVec, elems: make([]val, len(x))}
		for i, e := range x {
			out.elems[i] = convertEDN(e)
		}
		return out
	case edn.Tag:
		return val{k: vOther, s: "a tagged value #" + x.Tagname}
	case bool:
		return val{k: vOther, lit: litBool, s: strconv.FormatBool(x)}
	case float64:
		return val{k: vOther, lit: litFloat, n: int64(math.Float64bits(x))}
	case rune:
		return val{k: vOther, lit: litChar, n: int64(x)}
	case map[any]any:
		out := val{k: vMap, elems: make([]val, 0, 2*len(x))}
		for k, v := range x {
			out.elems = append(out.elems, convertEDN(k), convertEDN(v))
		}
		return sortPairs(out)
	case map[any]bool:
		return val{k: vOther, s: "a set"}
	}
	return val{k: vOther, s: fmt.Sprintf("a %T", x)}
}

// floatLit renders a float as EDN does: always with a point or exponent,
// so that it never reads back as an integer.
func floatLit(x float64) string {
	s := strconv.FormatFloat(x, 'g', -1, 64)
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return ""
	}
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}

// charLit renders a character as an EDN literal.
func charLit(r rune) string {
	switch r {
	case '\n':
		return `\newline`
	case ' ':
		return `\space`
	case '\t':
		return `\tab`
	case '\r':
		return `\return`
	}
	if r < 0x20 || r == utf8.RuneError {
		return ""
	}
	return `\` + string(r)
}

// sortPairs orders a map's pairs by key (integers first, in order, then
// the others by description), so that reading is deterministic.
func sortPairs(m val) val {
	n := len(m.elems) / 2
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	less := func(a, b val) int {
		switch {
		case a.k == vInt && b.k == vInt:
			return cmp.Compare(a.n, b.n)
		case a.k == vInt:
			return -1
		case b.k == vInt:
			return 1
		}
		return strings.Compare(fullText(a), fullText(b))
	}
	slices.SortFunc(idx, func(i, j int) int { return less(m.elems[2*i], m.elems[2*j]) })
	out := make([]val, 0, len(m.elems))
	for _, i := range idx {
		out = append(out, m.elems[2*i], m.elems[2*i+1])
	}
	m.elems = out
	return m
}

// fullText is v's whole EDN text (describe cuts it), for ordering.
func fullText(v val) string {
	var b strings.Builder
	b.WriteByte(byte(v.k))
	if !writeEDN(&b, v, 0) {
		b.WriteString(v.describe())
	}
	return b.String()
}

// convertJSON reduces a value produced by encoding/json with UseNumber.
func convertJSON(x any) val {
	switch x := x.(type) {
	case nil:
		return val{k: vNil}
	case json.Number:
		s := string(x)
		if strings.ContainsAny(s, ".eE") {
			return val{k: vOther, s: "the number " + s}
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return val{k: vBig, s: s}
		}
		return val{k: vInt, n: n}
	case string:
		return val{k: vString, s: x}
	case []any:
		out := val{k: vVec, elems: make([]val, len(x))}
		for i, e := range x {
			out.elems[i] = convertJSON(e)
		}
		return out
	case bool:
		return val{k: vOther, s: strconv.FormatBool(x)}
	case map[string]any:
		// An object's names are strings; one that is an integer in its
		// canonical form is that integer (elle-cli writes integer keys so).
		out := val{k: vMap, elems: make([]val, 0, 2*len(x))}
		for k, v := range x {
			key := val{k: vString, s: k}
			if n, err := strconv.ParseInt(k, 10, 64); err == nil && strconv.FormatInt(n, 10) == k {
				key = val{k: vInt, n: n}
			}
			out.elems = append(out.elems, key, convertJSON(v))
		}
		return sortPairs(out)
	}
	return val{k: vOther, s: fmt.Sprintf("a %T", x)}
}

// setField fills one field of op from an operation map entry.
func (op *rawOp) setField(name string, v val) {
	switch name {
	case "type":
		if s, ok := v.name(); ok {
			for i, n := range opTypeNames {
				if n == s {
					op.typ, op.typeState = opType(i), 1
					return
				}
			}
		}
		op.typeState = 2
		op.oddFields().typeDesc = v.describe()
	case "f":
		if s, ok := v.name(); ok && s == "init" {
			op.oddFields().init = true
		} else if !ok || s != "txn" {
			op.oddFields().fReason = ":f " + v.describe()
		}
	case "process":
		switch v.k {
		case vNil:
		case vInt:
			op.proc, op.procKind, op.hasProc = v.n, vInt, true
		default:
			op.procKind, op.hasProc = v.k, true
			op.oddFields().procDesc = v.describe()
		}
	case "index":
		if v.k == vInt {
			op.index, op.hasIndex = v.n, true
		}
	case "time":
		if v.k == vInt {
			op.time, op.hasTime = v.n, true
		}
	case "value":
		x := v // not v itself: it would escape on every call
		op.value, op.hasValue = &x, true
	}
}
