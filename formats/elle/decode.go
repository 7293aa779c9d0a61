package elle

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"olympos.io/encoding/edn"

	"github.com/hyperiso/hyperiso/history"
)

// lines maps byte offsets to 1-based line numbers, incrementally.
type lines struct {
	data []byte
	off  int
	line int
}

func (l *lines) at(off int) int {
	if off > len(l.data) {
		off = len(l.data)
	}
	if off < l.off {
		l.off, l.line = 0, 1
	}
	l.line += bytes.Count(l.data[l.off:off], []byte{'\n'})
	l.off = off
	return l.line
}

// skipSpace skips EDN whitespace (commas included) and line comments.
func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\r', '\n', ',', '\f':
			i++
		case ';':
			for i < len(data) && data[i] != '\n' {
				i++
			}
		default:
			return i
		}
	}
	return i
}

// nextLine returns the offset just past the newline at or after i.
func nextLine(data []byte, i int) int {
	if j := bytes.IndexByte(data[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(data)
}

// maxDepth bounds the nesting of an EDN form (collections, tags and
// discards): Jepsen's operation maps nest four or five levels deep, and the
// EDN decoder recurses once per level, so a deeper form is an error rather
// than a stack overflow.
const maxDepth = 1000

// Marks on scanForm's stack besides closing brackets.
const (
	markTag     = 't' // #tag: the next form completes it
	markDiscard = '_' // #_: the next form is dropped
)

// formScan is what scanForm learnt of a form.
type formScan struct {
	deep int  // where its nesting first exceeds maxDepth, or -1
	end  int  // the offset just past it, or -1 if it does not end well
	open bool // it is still open at the end of the input
}

// scanForm scans the EDN form starting at data[off] without decoding it,
// the way the EDN lexer splits tokens. It never stops early inside a
// well-formed form, so the decoder never sees an unchecked level. A
// bracket that does not match ends the scan (end -1, not open): the
// decoder reports it.
//
// Every opening bracket, tag or discard still pending at the end of the
// input starts a form that is open too: in lenient mode, which tries again
// on each following line, r.open remembers them and a scan that meets one
// stops there, so that a file of forms that never close is read in linear
// time, not quadratic.
func (r *ednRun) scanForm(off int) formScan {
	data := r.data
	res := formScan{deep: -1, end: -1}
	var stack []byte // closers and marks
	var starts []int // where each stack entry starts
	// complete records that a form ended; it reports whether that form
	// is the whole top-level form.
	complete := func() bool {
		for len(stack) > 0 {
			switch stack[len(stack)-1] {
			case markTag:
				// The tagged value ends the tag form too.
				stack, starts = stack[:len(stack)-1], starts[:len(starts)-1]
				continue
			case markDiscard:
				// A dropped form counts as no form: the enclosing
				// collection, tag or top level still waits for one.
				stack, starts = stack[:len(stack)-1], starts[:len(starts)-1]
			}
			return false
		}
		return true
	}
	// push enters a nested form at i; false if it is known to stay open.
	push := func(c byte, i int) bool {
		stack, starts = append(stack, c), append(starts, i)
		if len(stack) > maxDepth && res.deep < 0 {
			res.deep = i
		}
		return r.open == nil || r.open[i/64]&(1<<(i%64)) == 0
	}
	// eof ends a scan that ran out of input inside the form.
	eof := func() formScan {
		if len(stack) == 0 {
			// Only discarded forms (#_) were left: no form is open, and
			// the decoder says there is none, as it does in strict mode.
			return res
		}
		if r.keepOpen {
			if r.open == nil {
				r.open = make([]uint64, len(data)/64+1)
			}
			for _, i := range starts {
				r.open[i/64] |= 1 << (i % 64)
			}
		}
		res.open = true
		return res
	}
	i := off
	for {
		i = skipEDNSpace(data, i)
		if i >= len(data) {
			return eof()
		}
		switch c := data[i]; c {
		case '[', '(', '{':
			closer := byte(']')
			switch c {
			case '(':
				closer = ')'
			case '{':
				closer = '}'
			}
			if !push(closer, i) {
				return eof()
			}
			i++
			continue
		case ']', ')', '}':
			if len(stack) == 0 || stack[len(stack)-1] != c {
				return res
			}
			stack, starts = stack[:len(stack)-1], starts[:len(starts)-1]
			i++
		case '#':
			if i+1 < len(data) {
				switch data[i+1] {
				case '{':
					if !push('}', i) {
						return eof()
					}
					i += 2
					continue
				case '_':
					if !push(markDiscard, i) {
						return eof()
					}
					i += 2
					continue
				}
			}
			if i+1 < len(data) && !isDelimiter(data, i+1) {
				// #tag: its name, then the form it tags.
				if !push(markTag, i) {
					return eof()
				}
				i = tokenEnd(data, i+1)
				continue
			}
			i = tokenEnd(data, i)
		case '"':
			i++
			for i < len(data) && data[i] != '"' {
				if data[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(data) {
				return eof()
			}
			i++
		case '\\':
			// A character: the backslash takes the next character
			// whatever it is (\], \"), then a name may follow (\newline).
			if i+1 >= len(data) {
				return eof()
			}
			_, n := utf8.DecodeRune(data[i+1:])
			i = tokenEnd(data, i+1+n)
		default:
			i = tokenEnd(data, i+1)
		}
		if complete() {
			res.end = i
			return res
		}
	}
}

// isDelimiter reports whether a token ends before data[i]: whitespace
// (commas and Unicode spaces included), a bracket, a string, a character
// or a comment.
func isDelimiter(data []byte, i int) bool {
	switch c := data[i]; c {
	case ' ', '\t', '\r', '\n', ',', '\f', '\v', '"', '[', ']', '(', ')', '{', '}', '\\', ';':
		return true
	default:
		if c < utf8.RuneSelf {
			return false
		}
		r, _ := utf8.DecodeRune(data[i:])
		return unicode.IsSpace(r)
	}
}

// skipEDNSpace is skipSpace with the EDN lexer's Unicode whitespace too.
func skipEDNSpace(data []byte, i int) int {
	for {
		i = skipSpace(data, i)
		if i >= len(data) || !isDelimiter(data, i) {
			return i
		}
		r, n := utf8.DecodeRune(data[i:])
		if !unicode.IsSpace(r) {
			return i
		}
		i += n
	}
}

// tokenEnd returns the offset of the first delimiter at or after i.
func tokenEnd(data []byte, i int) int {
	for i < len(data) && !isDelimiter(data, i) {
		i++
	}
	return i
}

// decodeOne decodes the EDN form starting at data[off:] and returns it with
// the offset just past it. Panics inside the decoder become errors.
func decodeOne(data []byte, off int, br *bufio.Reader, rd *bytes.Reader) (x any, end int, err error) {
	rd.Reset(data[off:])
	br.Reset(rd)
	dec := edn.NewDecoder(br)
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("malformed EDN (%s)", clip(fmt.Sprint(r)))
			}
		}()
		err = dec.Decode(&x)
	}()
	end = len(data) - rd.Len() - br.Buffered()
	return x, end, err
}

// ednError renders an error of the EDN decoder for a message.
func ednError(err error) (msg string, tooBig bool) {
	var ne *strconv.NumError
	if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
		return fmt.Sprintf("integer %s does not fit in 64 bits", clip(ne.Num)), true
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of input inside a form", false
	}
	var se *edn.SyntaxError
	if errors.As(err, &se) {
		if strings.Contains(se.Error(), "unexpected end") {
			return "unexpected end of input inside a form", false
		}
		return "EDN syntax error: " + clip(se.Error()), false
	}
	var ue *edn.UnhashableError
	if errors.As(err, &ue) {
		return "EDN syntax error: a map key or set element that cannot be compared", false
	}
	s := err.Error()
	if strings.Contains(s, "No more tokens") {
		return "unexpected end of input inside a form", false
	}
	return "EDN syntax error: " + clip(s), false
}

// decodeEDN splits data into top-level forms and decodes each operation map.
// A top-level vector or list is opened and its elements read one by one so
// that every operation keeps its own line. A large file of operation maps
// (Jepsen's history.edn) is decoded in parallel chunks cut at line starts;
// a chunk counts only if the chunk before it ends exactly where it starts,
// otherwise decoding goes on sequentially from there, so the result is the
// same as a sequential decode.
func (p *parser) decodeEDN(data []byte) error {
	return p.decodeChunks(data, chunkStarts(data))
}

// decodeChunks decodes data in the chunks between cuts (0, then offsets in
// increasing order, then len(data)); nil cuts decode it in one run.
func (p *parser) decodeChunks(data []byte, cuts []int) error {
	p.data = data
	if cuts == nil {
		r := p.newEDNRun(data, 0)
		_, _, err := p.ednRun(r, 0, len(data), false)
		p.ops, p.mops = r.ops, r.mops
		return err
	}
	type result struct {
		r   *ednRun
		end int
		ok  bool
	}
	// The chunks decode into one array, each into its own part (sized
	// for an operation map per line), and are then moved together in
	// place: a large history's operations are not held twice.
	res := make([]result, len(cuts)-1)
	sizes := make([]int, len(res))
	total := 0
	for i := range res {
		sizes[i] = bytes.Count(data[cuts[i]:cuts[i+1]], []byte{'\n'}) + 1
		total += sizes[i]
	}
	all := make([]rawOp, total)
	var wg sync.WaitGroup
	for i, part := 0, all; i < len(res); i++ {
		r := p.newEDNRun(data, cuts[i])
		r.ops, part = part[:0:sizes[i]], part[sizes[i]:]
		wg.Go(func() {
			end, ok, _ := p.ednRun(r, cuts[i], cuts[i+1], true)
			res[i] = result{r, end, ok}
		})
	}
	wg.Wait()
	p.ops = all[:0]
	for i, c := range res {
		if len(c.r.ops) > sizes[i] {
			// More maps than lines: the part overflowed into an array of
			// its own, and moving it into place could overwrite the next.
			n := 0
			for _, c := range res {
				n += len(c.r.ops)
			}
			p.ops = make([]rawOp, 0, n)
			break
		}
	}
	off := 0
	for i, c := range res {
		if c.ok && skipSpace(data, cuts[i]) == skipSpace(data, off) {
			p.ops = append(p.ops, c.r.ops...)
			p.mops += c.r.mops
			off = c.end
			continue
		}
		// The rest decodes sequentially, over the parts it replaces.
		r := p.newEDNRun(data, off)
		r.ops = p.ops[len(p.ops):len(p.ops)]
		_, _, err := p.ednRun(r, off, len(data), false)
		p.ops = append(p.ops, r.ops...)
		p.mops += r.mops
		if err != nil {
			return err
		}
		break
	}
	for i := range p.ops {
		p.ops[i].ord = i
	}
	return nil
}

// parallelChunk is the least input worth a chunk of its own.
const parallelChunk = 512 << 10

// chunkStarts cuts a large sequence of operation maps at line starts, one
// chunk per processor; nil when not worth it.
func chunkStarts(data []byte) []int {
	n := min(runtime.GOMAXPROCS(0), 8, len(data)/parallelChunk)
	if n < 2 {
		return nil
	}
	if i := skipSpace(data, 0); i >= len(data) || (data[i] != '{' && data[i] != '#') {
		return nil
	}
	cuts := []int{0}
	for i := 1; i < n; i++ {
		c := nextLine(data, len(data)/n*i)
		if c <= cuts[len(cuts)-1] || c >= len(data) {
			continue
		}
		cuts = append(cuts, c)
	}
	return append(cuts, len(data))
}

// ednRun is the state of one sequential decode.
type ednRun struct {
	data []byte
	ln   *lines
	br   *bufio.Reader
	rd   *bytes.Reader
	ops  []rawOp
	// open marks the offsets where a form known to stay open starts
	// (scanForm), a bit per byte of data, allocated at the first; kept in
	// lenient mode only, where it saves rescans.
	open     []uint64
	keepOpen bool
	fast     fastEDN
	// mops counts the micro-operations of the completions the fast path
	// read: about the operations the history will have.
	mops int
}

func (p *parser) newEDNRun(data []byte, off int) *ednRun {
	return &ednRun{
		data: data,
		ln:   &lines{data: data, off: off, line: 1 + bytes.Count(data[:off], []byte{'\n'})},
		br:   bufio.NewReaderSize(nil, 4096), // the smallest the EDN decoder uses as is
		rd:   bytes.NewReader(nil),
		// Spec runs give up at the first error: nothing to remember.
		keepOpen: p.opt.Lenient,
	}
}

// ednRun decodes the top-level forms from off on, up to the first that
// starts at or after limit, and returns where it stopped (that form's
// start, or the end of the data). With spec (a speculative parallel chunk)
// it reports nothing and gives up (ok false) at anything but an operation
// map.
func (p *parser) ednRun(r *ednRun, off, limit int, spec bool) (end int, ok bool, err error) {
	data, ln := r.data, r.ln
	if r.ops == nil && limit > off {
		// Usually one operation map per line: growing a slice of large
		// rawOps step by step costs more than counting the lines.
		r.ops = make([]rawOp, 0, bytes.Count(data[off:limit], []byte{'\n'})+1)
	}
	var closer byte // the closing bracket of an open top-level collection
	collLine := 0
	for {
		off = skipSpace(data, off)
		if off >= len(data) || (closer == 0 && off >= limit) {
			if closer != 0 {
				pos := p.pos(collLine)
				if !p.opt.Lenient {
					return off, false, history.Errorf(pos, "EDN syntax error: the top-level collection opened here is not closed")
				}
				p.warn("syntax", pos, "the top-level collection opened here is not closed")
			}
			return off, true, nil
		}
		c := data[off]
		if spec && c != '{' && c != '#' {
			return off, false, nil
		}
		if closer != 0 && c == closer {
			closer = 0
			off++
			continue
		}
		if closer == 0 && (c == '[' || c == '(') {
			closer = ']'
			if c == '(' {
				closer = ')'
			}
			collLine = ln.at(off)
			off++
			continue
		}
		line := ln.at(off)
		// A plain operation map is well-formed and shallow, so scanForm
		// would find nothing to say about it, unless it stopped at a form
		// known to stay open (r.open), which only scanForm handles.
		if c == '{' && r.open == nil {
			op := rawOp{line: line, ord: len(r.ops)}
			if end, ok := r.fast.opMap(data, off, &op); ok {
				if op.typ != tInvoke {
					r.mops += r.fast.mops
				}
				r.ops = append(r.ops, op)
				off = end
				continue
			}
		}
		scan := r.scanForm(off)
		if scan.deep >= 0 {
			// The EDN decoder recurses once per level: check before it runs.
			if spec {
				return off, false, nil
			}
			deepLine := line + bytes.Count(data[off:scan.deep], []byte{'\n'})
			msg := fmt.Sprintf("EDN syntax error: the form nests deeper than %d levels, this reader's limit", maxDepth)
			if deepLine != line {
				msg += fmt.Sprintf(" (the form starts at line %d)", line)
			}
			if !p.opt.Lenient {
				return off, false, history.Errorf(p.pos(deepLine), "%s", msg)
			}
			if scan.end < 0 {
				// Not closed: the next line may well start the next form.
				p.warn("syntax", p.pos(deepLine), msg+"; skipped to the next line")
				off = nextLine(data, off)
				continue
			}
			p.warn("syntax", p.pos(deepLine), msg+"; the form is skipped")
			off = scan.end
			continue
		}
		if scan.open && (spec || p.opt.Lenient) {
			// What the decoder would say, without its reading to the end
			// of the input once per line.
			if spec {
				return off, false, nil
			}
			p.warn("syntax", p.pos(line), "unexpected end of input inside a form (the form starts here); skipped to the next line")
			off = nextLine(data, off)
			continue
		}
		x, end, err := decodeOne(data, off, r.br, r.rd)
		if err == io.EOF {
			// Only discarded forms (#_) were left.
			off = len(data)
			continue
		}
		if spec && err != nil {
			return off, false, nil
		}
		if err != nil {
			msg, _ := ednError(err)
			errLine, resume := ln.at(max(end-1, off)), nextLine(data, max(end-1, off))
			if strings.HasPrefix(msg, "unexpected end") {
				// The form never closed: it starts here, and the next line
				// may well start the next one.
				errLine, resume = line, nextLine(data, off)
				msg += " (the form starts here)"
			}
			if !p.opt.Lenient {
				return off, false, history.Errorf(p.pos(errLine), "%s", msg)
			}
			p.warn("syntax", p.pos(errLine), msg+"; skipped to the next line")
			off = resume
			continue
		}
		start := off
		off = end
		if t, ok := x.(edn.Tag); ok {
			// #jepsen.history.Op{...} and the like: the map is what counts.
			x = t.Value
		}
		m, ok := x.(map[any]any)
		if !ok {
			if spec {
				return start, false, nil
			}
			pos := p.pos(line)
			desc := convertEDN(x).describe()
			if !p.opt.Lenient {
				return start, false, history.Errorf(pos, "expected an operation map {:type ..., :process ..., :value ...}, found %s", desc)
			}
			p.warn("syntax", pos, "expected an operation map, found "+desc+"; skipped")
			off = nextLine(data, off-1)
			continue
		}
		op := rawOp{line: line, ord: len(r.ops)}
		for k, v := range m {
			if kw, ok := k.(edn.Keyword); ok {
				op.setField(string(kw), convertEDN(v))
			}
		}
		r.ops = append(r.ops, op)
	}
}
