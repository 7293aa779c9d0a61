package textsafe

import "testing"

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		"":                        "",
		"plain key":               "plain key",
		"é🙂 [:anti 3] \\a":        "é🙂 [:anti 3] \\a",
		"a\nb":                    `a\nb`,
		"\r\x1b[2KSER: SATISFIED": `\r\x1b[2KSER: SATISFIED`,
		"tab\there":               `tab\there`,
		"del\x7f":                 `del\x7f`,
		"c1\u009b2J":              `c1\u009b2J`,
		"bidi\u202eevil":          `bidi\u202eevil`,
		"bad\xffutf8\xc3":         `bad\xffutf8\xc3`,
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}
