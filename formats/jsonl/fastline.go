package jsonl

import (
	"bytes"

	"github.com/hyperiso/hyperiso/history"
)

// fastTxnLine reads a plain transaction line written exactly as Write
// writes one — {"session":S[,"id":I][,"status":"…"][,"level":"…"]
// [,"time":[A,B]],"ops":[["r"|"w"|"append",K,V],…]} with no spaces and
// integers only — into rec and ops, straight from the bytes. Anything else
// (another order, spaces, names, lists, a bad value) makes it report
// false, leaving ops as it was, and the general scanner reads the line:
// whatever this accepts, that gives the same.
func fastTxnLine(s []byte, rec *lineRec, ops *[]history.RawOp) bool {
	n := len(s)
	for n > 0 && (s[n-1] == '\n' || s[n-1] == '\r') {
		n--
	}
	s = s[:n]
	const sessionField = `{"session":`
	if !bytes.HasPrefix(s, []byte(sessionField)) {
		return false
	}
	i := len(sessionField)
	var ok bool
	r := lineRec{no: rec.no, lo: rec.lo, hi: rec.hi, status: history.Committed, level: history.LevelNone}
	if r.session, i, ok = fastInt(s, i); !ok {
		return false
	}
	if i, ok = fastField(s, i, `,"id":`); ok {
		r.hasID = true
		if r.id, i, ok = fastInt(s, i); !ok {
			return false
		}
	}
	if i, ok = fastField(s, i, `,"status":"`); ok {
		var word []byte
		if word, i, ok = fastWord(s, i); !ok {
			return false
		}
		if r.status, ok = history.ParseStatus(string(word)); !ok {
			return false
		}
	}
	if i, ok = fastField(s, i, `,"level":"`); ok {
		var word []byte
		if word, i, ok = fastWord(s, i); !ok {
			return false
		}
		if r.level, ok = history.ParseLevel(string(word)); !ok || r.level == history.Mixed {
			return false
		}
	}
	if i, ok = fastField(s, i, `,"time":[`); ok {
		r.hasTime = true
		if r.t0, i, ok = fastInt(s, i); !ok || i >= len(s) || s[i] != ',' {
			return false
		}
		if r.t1, i, ok = fastInt(s, i+1); !ok || i >= len(s) || s[i] != ']' || r.t0 > r.t1 {
			return false
		}
		i++
	}
	if i, ok = fastField(s, i, `,"ops":[`); !ok {
		return false
	}
	lo := len(*ops)
	out := *ops
	if i < len(s) && s[i] == ']' {
		i++
	} else {
		for {
			var op history.RawOp
			switch {
			case hasAt(s, i, `["r",`):
				op.Kind, i = history.OpRead, i+5
			case hasAt(s, i, `["w",`):
				op.Kind, i = history.OpWrite, i+5
			case hasAt(s, i, `["append",`):
				op.Kind, i = history.OpAppend, i+10
			default:
				return false
			}
			if op.Key, i, ok = fastInt(s, i); !ok || i >= len(s) || s[i] != ',' {
				return false
			}
			if op.Value, i, ok = fastInt(s, i+1); !ok || i+1 >= len(s) || s[i] != ']' {
				return false
			}
			out = append(out, op)
			i++
			if s[i] == ']' {
				i++
				break
			}
			if s[i] != ',' {
				return false
			}
			i++
		}
	}
	if i != len(s)-1 || s[i] != '}' {
		return false
	}
	*ops = out
	r.opLo, r.opHi, r.fast = lo, len(out), true
	*rec = r
	return true
}

// fastField reports whether s has field at i, and where its value starts.
func fastField(s []byte, i int, field string) (int, bool) {
	if hasAt(s, i, field) {
		return i + len(field), true
	}
	return i, false
}

func hasAt(s []byte, i int, word string) bool {
	return len(s)-i >= len(word) && string(s[i:i+len(word)]) == word
}

// fastWord reads a string's letters up to its closing quote; an escape or
// anything but a lowercase letter or '-' is left to the general scanner.
func fastWord(s []byte, i int) ([]byte, int, bool) {
	start := i
	for i < len(s) && (s[i] >= 'a' && s[i] <= 'z' || s[i] == '-') {
		i++
	}
	if i >= len(s) || s[i] != '"' {
		return nil, 0, false
	}
	return s[start:i], i + 1, true
}

// fastInt reads an integer of at most 18 digits (so that it cannot
// overflow) without a leading zero; a longer or malformed one is left to
// the general scanner, which tells what is wrong with it.
func fastInt(s []byte, i int) (int64, int, bool) {
	neg := i < len(s) && s[i] == '-'
	if neg {
		i++
	}
	start := i
	var u uint64
	for i < len(s) && s[i]-'0' < 10 {
		u = u*10 + uint64(s[i]-'0')
		i++
	}
	if d := i - start; d == 0 || d > 18 || d > 1 && s[start] == '0' {
		return 0, 0, false
	}
	if neg {
		return -int64(u), i, true
	}
	return int64(u), i, true
}
