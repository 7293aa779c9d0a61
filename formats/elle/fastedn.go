package elle

// fastEDN reads the operation maps Jepsen writes — {:type :ok, :process 3,
// :value [[:append 1 2] [:r 3 nil]], ...}: keyword keys; values that are
// nil, int64 decimals, plain keywords, plain ASCII strings, and vectors or
// lists of those — straight into val, without the generic EDN decoder's
// interface values and per-token allocations. Anything else (tags, maps,
// sets, floats, characters, escapes, comments, big integers, duplicate
// keys, deep nesting) makes it give up, and the caller decodes the form
// with the EDN decoder as before, so results and messages do not change.
//
// opMap only checks the :value (and any key the reader ignores) and notes
// where the :value starts: a large history's values would take many times
// the file's size as vals, so the builder decodes each again (at) when it
// needs it, into storage it reuses.
type fastEDN struct {
	data  []byte
	i     int
	stack []val // elements of the vectors being read
	slab  []val // backing store handed out to finished vectors
	block []val // the last block slab was cut from, which reset reuses
	// mops is the length of the last :value opMap read, if a vector: the
	// builder makes room for the operations ahead.
	mops int
}

// fastMaxDepth bounds the nesting the fast path reads; deeper forms go to
// the decoder (which has its own, larger limit).
const fastMaxDepth = 16

// opMap reads the operation map at data[off] into op and returns the
// offset just past it, or ok false to leave the form to the decoder.
func (f *fastEDN) opMap(data []byte, off int, op *rawOp) (end int, ok bool) {
	f.data, f.i, f.mops = data, off, 0
	if off >= len(data) || data[off] != '{' {
		return 0, false
	}
	f.i++
	var seen [12]string
	nseen := 0
	for {
		f.ws()
		if f.i >= len(data) {
			return 0, false
		}
		if data[f.i] == '}' {
			return f.i + 1, true
		}
		if data[f.i] != ':' {
			return 0, false
		}
		key, ok := f.token(true)
		if !ok || key == "" {
			return 0, false
		}
		if nseen == len(seen) {
			return 0, false
		}
		for _, s := range seen[:nseen] {
			if s == key {
				return 0, false
			}
		}
		seen[nseen] = key
		nseen++
		f.ws()
		switch key {
		case "type", "f", "process", "index", "time":
			v, ok := f.value(0, true)
			if !ok {
				return 0, false
			}
			op.setField(key, v)
		default:
			at := f.i
			v, ok := f.value(0, false)
			if !ok {
				return 0, false
			}
			if key == "value" {
				op.valAt, op.hasValue = at, true
				if v.k == vVec {
					f.mops = int(v.n)
				}
			}
		}
	}
}

// at decodes the value at data[off], which opMap checked. The vectors of
// the result live in storage that the next reset hands out again.
func (f *fastEDN) at(data []byte, off int) val {
	f.data, f.i = data, off
	v, ok := f.value(0, true)
	if !ok {
		// opMap read this very text with the same code.
		panic("elle: a :value the fast path checked does not decode")
	}
	return v
}

// reset makes the storage of the values at returned free for reuse.
func (f *fastEDN) reset() { f.slab = f.block }

func (f *fastEDN) ws() {
	for f.i < len(f.data) {
		switch f.data[f.i] {
		case ' ', '\t', '\r', '\n', ',':
			f.i++
		default:
			return
		}
	}
}

// delimited reports whether a token may end at f.i.
func (f *fastEDN) delimited() bool {
	if f.i >= len(f.data) {
		return false
	}
	switch f.data[f.i] {
	case ' ', '\t', '\r', '\n', ',', ']', ')', '}':
		return true
	}
	return false
}

// token reads a keyword's name at f.i (on its ':'): a letter, then
// letters, digits and - _ . ? ! * +. Without build it only checks it.
func (f *fastEDN) token(build bool) (string, bool) {
	d := f.data
	start := f.i + 1
	i := start
	for i < len(d) {
		c := d[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' ||
			i > start && (c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '?' || c == '!' || c == '*' || c == '+') {
			i++
			continue
		}
		break
	}
	f.i = i
	if i == start || !f.delimited() {
		return "", false
	}
	if !build {
		return "", true
	}
	return keyword(d[start:i]), true
}

// keyword returns the keyword named b, without allocating for the ones
// every operation map repeats.
func keyword(b []byte) string {
	switch string(b) {
	case "type":
		return "type"
	case "f":
		return "f"
	case "value":
		return "value"
	case "process":
		return "process"
	case "index":
		return "index"
	case "time":
		return "time"
	case "invoke":
		return "invoke"
	case "ok":
		return "ok"
	case "fail":
		return "fail"
	case "info":
		return "info"
	case "txn":
		return "txn"
	case "r":
		return "r"
	case "w":
		return "w"
	case "append":
		return "append"
	}
	return string(b)
}

// value reads the value at f.i; without build it only checks that it
// would read it, allocating nothing, and returns a vector's length in n.
func (f *fastEDN) value(depth int, build bool) (val, bool) {
	d := f.data
	if f.i >= len(d) {
		return val{}, false
	}
	switch c := d[f.i]; {
	case c == ':':
		s, ok := f.token(build)
		return val{k: vKeyword, s: s}, ok
	case c == '-' || c >= '0' && c <= '9':
		return f.integer()
	case c == '"':
		i := f.i + 1
		for i < len(d) && d[i] != '"' {
			if d[i] < 0x20 || d[i] >= 0x7f || d[i] == '\\' {
				return val{}, false
			}
			i++
		}
		if i >= len(d) {
			return val{}, false
		}
		var s string
		if build {
			s = string(d[f.i+1 : i])
		}
		f.i = i + 1
		return val{k: vString, s: s}, f.delimited()
	case c == 'n':
		if len(d)-f.i >= 3 && string(d[f.i:f.i+3]) == "nil" {
			f.i += 3
			return val{k: vNil}, f.delimited()
		}
	case c == '[' || c == '(':
		if depth >= fastMaxDepth {
			return val{}, false
		}
		closer := byte(']')
		if c == '(' {
			closer = ')'
		}
		f.i++
		base := len(f.stack)
		n := 0
		for {
			f.ws()
			if f.i >= len(d) {
				f.stack = f.stack[:base]
				return val{}, false
			}
			if d[f.i] == closer {
				f.i++
				break
			}
			v, ok := f.value(depth+1, build)
			if !ok {
				f.stack = f.stack[:base]
				return val{}, false
			}
			if build {
				f.stack = append(f.stack, v)
			}
			n++
		}
		if !build {
			return val{k: vVec, n: int64(n)}, f.delimited()
		}
		elems := f.take(len(f.stack) - base)
		copy(elems, f.stack[base:])
		clear(f.stack[base:]) // drop references to strings and elements
		f.stack = f.stack[:base]
		return val{k: vVec, elems: elems}, f.delimited()
	}
	return val{}, false
}

// integer reads a decimal int64 without sign or leading zeros beyond EDN's
// plain form; anything else (1N, 1.5, 1e3, +1, overflow) gives up.
func (f *fastEDN) integer() (val, bool) {
	d := f.data
	i := f.i
	neg := d[i] == '-'
	if neg {
		i++
	}
	start := i
	var u uint64
	for i < len(d) && d[i] >= '0' && d[i] <= '9' {
		if i-start >= 18 {
			return val{}, false // may overflow: leave it to the decoder
		}
		u = u*10 + uint64(d[i]-'0')
		i++
	}
	if i == start || d[start] == '0' && i-start > 1 {
		return val{}, false
	}
	f.i = i
	n := int64(u)
	if neg {
		n = -n
	}
	return val{k: vInt, n: n}, f.delimited()
}

// take hands out n elements of the slab, so that vectors share a few large
// allocations rather than one each.
func (f *fastEDN) take(n int) []val {
	if n == 0 {
		return make([]val, 0)
	}
	if len(f.slab) < n {
		f.block = make([]val, max(4096, n))
		f.slab = f.block
	}
	s := f.slab[:n:n]
	f.slab = f.slab[n:]
	return s
}
