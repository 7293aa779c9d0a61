package online

// Line kinds of a JSONL stream, as far as following it needs to tell them
// apart; the jsonl reader decides everything else (and every error).
const (
	lineOther  uint8 = iota // init, aborted_writes, version_order, or what the reader refuses
	lineBlank               // skipped by the reader, counted in line numbers
	lineHeader              // {"hyperiso":1,…}
	lineTxn                 // a transaction: it has "session"
	lineEnd                 // {"end":{…}}: the stream is whole
)

// lineInfo is one line of the stream: where it starts in Checker.buf and
// what it is. A transaction line records whether it names its id, since
// a line without one takes its place among transaction lines as id.
type lineInfo struct {
	start int
	no    int // line number in the whole stream
	ord   int // a transaction line's place among them (its default id)
	kind  uint8
	hasID bool
}

// classify tells a line's kind from its top-level keys (a key inside a
// nested value, or a string value that looks like a key, does not count).
// first says no non-blank line came before; promised is set for a header
// with "trailer":true.
func classify(line []byte, first bool) (info lineInfo, promised bool) {
	if isBlank(line) {
		return lineInfo{kind: lineBlank}, false
	}
	info.kind = lineOther
	header := false
	topKeys(line, func(k []byte, val int) {
		switch string(k) {
		case "hyperiso":
			header = first
		case "session":
			info.kind = lineTxn
		case "id":
			info.hasID = true
		case "end":
			info.kind = lineEnd
		case "trailer":
			promised = hasTrue(line, val)
		}
	})
	if header {
		info.kind = lineHeader
	} else {
		promised = false
	}
	return info, promised
}

func isBlank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// topKeys calls f with each key of the JSON object on line at depth one
// (its bytes between the quotes, escapes left as they are) and the index
// just after the key's closing quote. Malformed input ends the scan
// quietly: the reader reports it.
func topKeys(line []byte, f func(key []byte, after int)) {
	depth, wantKey := 0, false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; c {
		case '"':
			j := i + 1
			for j < len(line) && line[j] != '"' {
				if line[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(line) {
				return
			}
			if depth == 1 && wantKey {
				f(line[i+1:j], j+1)
				wantKey = false
			}
			i = j
		case '{', '[':
			depth++
			wantKey = depth == 1 && c == '{'
		case '}', ']':
			depth--
		case ',':
			wantKey = depth == 1
		}
	}
}

// hasTrue says whether the value after a key (from index i: spaces, a
// colon, spaces) is the literal true.
func hasTrue(line []byte, i int) bool {
	for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == ':') {
		i++
	}
	return len(line) >= i+4 && string(line[i:i+4]) == "true"
}
