// Package textsafe escapes what must not reach a terminal from the input:
// names of keys and values, file names and messages quoting them are
// printed in text output, where a control character could move the cursor,
// clear the screen or rewrite a line already printed (a key named
// "\r\x1b[2KSER: SATISFIED" would overwrite a violated verdict).
package textsafe

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// String returns s with every control character (C0, DEL, C1), Unicode
// line and paragraph separator and bidirectional control escaped as Go
// escapes it (\n, \x1b, \u202e) and every byte that is not UTF-8 as \xNN.
// Backslashes are kept as they are. Text that needs none is returned as
// is.
func String(s string) string {
	i := 0
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= utf8.RuneSelf {
			break
		}
	}
	if i == len(s) {
		return s
	}
	// Only ASCII text before i.
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])>>4, 16))
			b.WriteString(strconv.FormatUint(uint64(s[i])&15, 16))
		case unsafeRune(r):
			q := strconv.QuoteRuneToASCII(r) // 'x' with the escape inside
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x200e, r == 0x200f, r == 0x2028, r == 0x2029,
		r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
