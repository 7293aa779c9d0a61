package elle

import (
	"fmt"
	"strconv"

	"github.com/hyperiso/hyperiso/history"
)

// vsScanner splits VeriStrong's elle-list-append text into whitespace-
// separated tokens, keeping each token's line.
type vsScanner struct {
	data []byte
	off  int
	line int
}

func isVSSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'
}

// atEnd reports whether only whitespace is left.
func (s *vsScanner) atEnd() bool {
	for i := s.off; i < len(s.data); i++ {
		switch s.data[i] {
		case ' ', '\t', '\r', '\n', '\f', '\v':
		default:
			return false
		}
	}
	return true
}

func (s *vsScanner) next() (tok []byte, line int, ok bool) {
	for s.off < len(s.data) {
		c := s.data[s.off]
		if c == '\n' {
			s.line++
		}
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '\f' && c != '\v' {
			break
		}
		s.off++
	}
	if s.off >= len(s.data) {
		return nil, s.line, false
	}
	start := s.off
	for s.off < len(s.data) {
		c := s.data[s.off]
		if c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v' {
			break
		}
		s.off++
	}
	return s.data[start:s.off], s.line, true
}

// parseVeriStrong reads VeriStrong's elle-list-append text (docs/formats.md):
// a record count N, then N records "session txn R key n a1 … an" or
// "session txn A key v". Every transaction is committed; a transaction
// belongs to the session of its first record.
func parseVeriStrong(data []byte, name string, opt Options) (*history.History, error) {
	p := newParser(name, opt)
	p.syntax = VeriStrong
	p.workload = ListAppend
	p.b = history.NewBuilder(name, Format)
	sc := &vsScanner{data: data, line: 1}
	// stop ends the parse at a structural error: fatal in strict mode, the
	// rest of the file ignored in lenient mode.
	stop := false
	fail := func(line int, format string, args ...any) error {
		if !opt.Lenient {
			return history.Errorf(p.pos(line), format, args...)
		}
		p.warn("syntax", p.pos(line), fmt.Sprintf(format, args...)+"; the rest of the file is ignored")
		stop = true
		return nil
	}
	num := func(what string) (int64, int, error) {
		tok, line, ok := sc.next()
		if !ok {
			return 0, line, fail(line, "unexpected end of input: expected %s", what)
		}
		v, err := strconv.ParseInt(string(tok), 10, 64)
		if err != nil {
			return 0, line, fail(line, "expected %s (a 64-bit integer), found %q", what, truncate(tok))
		}
		return v, line, nil
	}
	n, line, err := num("the record count")
	if err != nil {
		return nil, err
	}
	if !stop && n < 0 {
		if err := fail(line, "negative record count %d", n); err != nil {
			return nil, err
		}
	}
	type vsTxn struct {
		t    history.TxnID
		sess int64
	}
	txns := map[int64]vsTxn{}
	records := int64(0)
	for !stop && records < n {
		if sc.atEnd() {
			break
		}
		sess, line, err := num("a session id")
		if err != nil || stop {
			if err != nil {
				return nil, err
			}
			break
		}
		id, _, err := num("a transaction id")
		if err != nil || stop {
			if err != nil {
				return nil, err
			}
			break
		}
		typ, tline, ok := sc.next()
		if !ok || (string(typ) != "R" && string(typ) != "A") {
			if err := fail(tline, "expected the record type R or A, found %q", truncate(typ)); err != nil {
				return nil, err
			}
			break
		}
		key, _, err := num("a key")
		if err != nil || stop {
			if err != nil {
				return nil, err
			}
			break
		}
		var list []int64
		var v int64
		if typ[0] == 'R' {
			cnt, cline, err := num("the length of the list read")
			if err != nil || stop {
				if err != nil {
					return nil, err
				}
				break
			}
			if cnt < 0 || cnt > int64(len(data)-sc.off+1)/2 {
				if err := fail(cline, "list length %d is impossible here", cnt); err != nil {
					return nil, err
				}
				break
			}
			list = make([]int64, 0, cnt)
			for range cnt {
				x, xline, err := num("a list element")
				if err != nil || stop {
					if err != nil {
						return nil, err
					}
					break
				}
				if x == history.EmptyList {
					if err := fail(xline, "list element %d is reserved for the empty list", x); err != nil {
						return nil, err
					}
					break
				}
				list = append(list, x)
			}
			if stop {
				break
			}
		} else {
			x, xline, err := num("the appended value")
			if err != nil || stop {
				if err != nil {
					return nil, err
				}
				break
			}
			if x == history.EmptyList {
				if err := fail(xline, "appended value %d is reserved for the empty list", x); err != nil {
					return nil, err
				}
				break
			}
			v = x
		}
		records++
		tx, ok := txns[id]
		if !ok {
			tx = vsTxn{t: p.b.Begin(p.b.Session(sess), id, history.Committed, p.pos(line)), sess: sess}
			txns[id] = tx
			p.useID(id)
		} else if tx.sess != sess {
			p.warn("session", p.pos(line), fmt.Sprintf("a record of transaction %d names session %d, but its first record named session %d; it stays there", id, sess, tx.sess))
		}
		if typ[0] == 'R' {
			p.b.ReadList(tx.t, key, list, history.EmptyList)
		} else {
			k := p.b.KeyID(key)
			vk := history.Version{Key: k, Value: p.b.ValueID(k, v)}
			if p.writes.add(vk) == 2 {
				p.dupWrites = append(p.dupWrites, vk)
				p.dupText = append(p.dupText, [2]string{strconv.FormatInt(key, 10), strconv.FormatInt(v, 10)})
				p.dupPos = append(p.dupPos, p.pos(line))
			}
			p.b.Append(tx.t, key, v)
		}
	}
	if !stop {
		if records < n {
			if err := fail(sc.line, "the file announces %d records but holds %d", n, records); err != nil {
				return nil, err
			}
		} else if tok, tline, ok := sc.next(); ok {
			if err := fail(tline, "trailing input after the %d announced records: %q", n, truncate(tok)); err != nil {
				return nil, err
			}
		} else if l := len(data); l > 0 && !isVSSpace(data[l-1]) {
			// Nothing else shows the end: a file cut inside its last number
			// reads as a smaller number.
			const msg = "the file does not end with a newline: its last record may have been cut (inside its last number)"
			if !opt.Lenient {
				return nil, history.Errorf(p.pos(sc.line), "%s; --lenient reads it as it is", msg)
			}
			p.warn("syntax", p.pos(sc.line), msg+"; read as it is")
		}
	}
	return p.finishHistory()
}

func truncate(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}
