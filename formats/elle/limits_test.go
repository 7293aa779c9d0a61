package elle_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/formats/elle"
	"github.com/hyperiso/hyperiso/history"
)

const (
	opLine   = "{:type :invoke, :process 0, :f :txn, :value [[:append 1 1]]}\n"
	okLine   = "{:type :ok, :process 0, :f :txn, :value [[:append 1 1]]}\n"
	depthMsg = "nests deeper than 1000 levels"
	// maxMsg bounds a message that quotes pathological input.
	maxMsg = 300
)

// deepForms are forms nested n levels deep in every way EDN nests: the EDN
// decoder recurses once per level, so each crashed the process at 2,000,000
// levels before the reader bounded the depth.
func deepForms(n int) map[string]string {
	return map[string]string{
		"vector, not closed": strings.Repeat("[", n),
		"list, not closed":   strings.Repeat("(", n),
		"map, not closed":    strings.Repeat("{", n),
		"set, not closed":    strings.Repeat("#{", n),
		"vector in a :value": "{:type :invoke :process 0 :value " + strings.Repeat("[", n) + strings.Repeat("]", n) + "}",
		"tags":               strings.Repeat("#a ", n) + "1",
		"discards":           strings.Repeat("#_ ", n) + strings.Repeat("1 ", n) + "{:type :invoke :process 0}",
		"tagged op map":      "#jepsen.history.Op{:type :invoke :process 0 :value " + strings.Repeat("(", n) + strings.Repeat(")", n) + "}",
		// A discarded first form must not end the check: the decoder goes
		// on to the next form.
		"after a discard":          "#_ 1 " + strings.Repeat("[", n),
		"after a Unicode space":    "#_\u00a0 1 " + strings.Repeat("[", n),
		"after nested discards":    "#_ #_ 1 2 " + strings.Repeat("[", n),
		"after brackets in a text": `#_ "]]]" #_ \] ` + strings.Repeat("[", n),
	}
}

// TestDeepNestingIsAnError: 200,000 and 2,000,000 levels of nesting are an
// error naming the file, the line and the limit, in linear time; lenient mode
// skips the form and reads on.
func TestDeepNestingIsAnError(t *testing.T) {
	for _, n := range []int{200_000, 2_000_000} {
		for name, form := range deepForms(n) {
			src := opLine + form + "\n" + okLine
			start := time.Now()
			_, err := elle.Parse(strings.NewReader(src), "deep.edn", elle.Options{Syntax: elle.EDN})
			took := time.Since(start)
			require.Error(t, err, "%d %s", n, name)
			require.Less(t, len(err.Error()), maxMsg, "%d %s", n, name)
			require.Contains(t, err.Error(), "deep.edn:2: ", "%d %s", n, name)
			require.Contains(t, err.Error(), depthMsg, "%d %s", n, name)
			// Linear work takes well under a second; the bound leaves room
			// for a loaded CI machine and still catches a quadratic scan
			// (2e6 levels squared) or a recursion that grows the stack.
			require.Less(t, took, 10*time.Second, "%d %s", n, name)

			// Inside a top-level vector, where each element is decoded on
			// its own.
			_, err = elle.Parse(strings.NewReader("[\n"+src+"]\n"), "deep.edn", elle.Options{Syntax: elle.EDN})
			require.ErrorContains(t, err, "deep.edn:3: ", "%d %s", n, name)
			require.ErrorContains(t, err, depthMsg, "%d %s", n, name)
		}
	}
	for name, form := range deepForms(200_000) {
		h, err := elle.Parse(strings.NewReader(opLine+form+"\n"+okLine), "deep.edn", elle.Options{Syntax: elle.EDN, Lenient: true})
		require.NoError(t, err, name)
		require.Len(t, h.Txns, 2, name) // T⊥ and the one on lines 1 and 3
		require.Equal(t, history.Committed, h.Txns[1].Status, name)
		require.NotEmpty(t, h.Warnings, name)
		require.Equal(t, 2, h.Warnings[0].Pos.Line, name)
		require.Contains(t, h.Warnings[0].Msg, depthMsg, name)
	}
}

// TestDepthLimitBoundary: the limit counts every collection, tag and
// discard of a form, the operation map included; brackets inside strings,
// characters and comments do not count.
func TestDepthLimitBoundary(t *testing.T) {
	nested := func(depth int) string { // an operation map of that depth
		return "{:type :invoke :process 0 :value " + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + "}\n"
	}
	for depth, deep := range map[int]bool{1000: false, 1001: true} {
		_, err := elle.Parse(strings.NewReader(nested(depth)), "b.edn", elle.Options{Syntax: elle.EDN})
		require.Error(t, err) // not a valid micro-operation either way
		if deep {
			require.ErrorContains(t, err, depthMsg)
		} else {
			require.NotContains(t, err.Error(), depthMsg)
		}
	}
	_, err := elle.Parse(strings.NewReader("#a #b "+nested(999)), "b.edn", elle.Options{Syntax: elle.EDN})
	require.ErrorContains(t, err, depthMsg)

	many := strings.Repeat("[", 5000)
	var notNested []string
	for _, s := range []string{
		`:note "` + many + `"`,
		`:note "\"` + many + `"`,
		":chars [" + strings.Repeat(`\[ `, 5000) + "]",
		":chars [" + strings.Repeat(`\[`, 5000) + "]", // \[\[ is one character after another
		":sym a" + strings.Repeat("#", 5000),
		"; " + many + "\n",
	} {
		notNested = append(notNested, "{:type :invoke, :process 0, :f :txn, :value [[:append 1 1]] "+s+"}\n")
	}
	src := strings.Join(notNested, okLine) + okLine
	h, err := elle.Parse(strings.NewReader(src), "b.edn", elle.Options{Syntax: elle.EDN})
	require.NoError(t, err)
	require.Len(t, h.Txns, 1+len(notNested))
}

// TestQuotedInputIsClipped: a message quotes at most 80 characters of the
// input, whatever its size, in every syntax.
func TestQuotedInputIsClipped(t *testing.T) {
	huge := strings.Repeat("x", 1_000_000)
	digits := strings.Repeat("9", 1_000_000)
	long := strings.Repeat("[", 900) + strings.Repeat("]", 900)
	for name, c := range map[string]struct {
		src  string
		want string
	}{
		"string value":       {`{:type :invoke :process 0 :value "` + huge + `"}`, `found "xxxxx`},
		"unicode value":      {`{:type :invoke :process 0 :value "` + strings.Repeat("é", 100_000) + `"}`, `found "éééé`},
		"keyword type":       {`{:type :` + huge + ` :process 0}`, "unknown :type :xxxx"},
		"string function":    {`{:type :invoke :process 0 :value [["` + huge + `" 1 1]]}`, `function "xxxx`},
		"symbol :f":          {"{:type :invoke :process 0 :f " + huge + " :value [[:append 1 1]]}\n{:type :ok :process 0 :f " + huge + " :value [[:append 1 1]]}", ""},
		"integer too large":  {`{:type :invoke :process 0 :index ` + digits + `}`, "integer 9999"},
		"deep micro-op":      {`{:type :invoke :process 0 :value [` + long + `]}`, "micro-operation 1 is [[[["},
		"wide micro-op":      {`{:type :invoke :process 0 :value [[:append 1 [` + strings.Repeat("[1 2 3 4 5 6 7 8 9] ", 1000) + `]]]}`, ""},
		"top-level string":   {`"` + huge + `"`, `found "xxx`},
		"unclosed string":    {`{:type :invoke :process 0 :value "` + huge, "unexpected end of input"},
		"unclosed vector":    {`{:type :invoke :process 0 :value [` + strings.Repeat("1 ", 100_000), "unexpected end of input"},
		"bad character":      {`{:type :invoke :process 0 :value [` + huge + `@]}`, "EDN syntax error"},
		"JSON string":        {`{"type": "invoke", "process": 0, "value": "` + huge + `"}`, `found "xxxx`},
		"JSON nesting":       {`{"type": "invoke", "process": 0, "value": [` + long + `]}`, "micro-operation 1 is [[[["},
		"JSON number":        {`{"type": "invoke", "process": 0, "value": [["append", 1, ` + digits + `.5]]}`, "the number 9999"},
		"JSON unclosed text": {`{"type": "invoke", "process": 0, "value": "` + huge, "JSON syntax error"},
	} {
		_, err := elle.Parse(strings.NewReader(c.src+"\n"), "q.edn", elle.Options{})
		if c.want == "" {
			if err == nil {
				// Leniently then: the warning is the message.
				h, lerr := elle.Parse(strings.NewReader(c.src+"\n"), "q.edn", elle.Options{Lenient: true})
				require.NoError(t, lerr, name)
				require.NotEmpty(t, h.Warnings, name)
				for _, w := range h.Warnings {
					require.Less(t, utf8.RuneCountInString(w.Msg), maxMsg, "%s: %.400s", name, w.Msg)
				}
				continue
			}
		} else {
			require.ErrorContains(t, err, c.want, name)
		}
		require.Error(t, err, name)
		require.Less(t, utf8.RuneCountInString(err.Error()), maxMsg, "%s: %.400s", name, err)
		require.NotContains(t, err.Error(), strings.Repeat("x", 81), name)
	}
}

// TestLongStringKeyKeepsItsName: clipping is for messages only; a string
// key's name, which is data, stays whole.
func TestLongStringKeyKeepsItsName(t *testing.T) {
	key := strings.Repeat("k", 200)
	src := `{:type :invoke, :process 0, :f :txn, :value [[:append "` + key + `" 1]]}` + "\n" +
		`{:type :ok, :process 0, :f :txn, :value [[:append "` + key + `" 1]]}` + "\n"
	h := parse(t, src, elle.Options{})
	require.Equal(t, []string{`"` + key + `"`}, h.KeyNames)
}

// TestLenientUnclosedFormsAreLinear: lenient mode tries again on the line
// after a form that never closes; a file of such lines was read in
// quadratic time (each try read to the end of the input).
func TestLenientUnclosedFormsAreLinear(t *testing.T) {
	for name, line := range map[string]string{
		"maps":    "{:type :ok, :process 0, :value [[:append 1 1]]\n",
		"vectors": "{:value [[:r 1 [1 2\n",
		"tags":    "#jepsen.history.Op{:type :ok\n",
		"sets":    "#{1 2 \n",
	} {
		src := opLine + strings.Repeat(line, 50_000)
		start := time.Now()
		h, err := elle.Parse(strings.NewReader(src), "open.edn", elle.Options{Syntax: elle.EDN, Lenient: true})
		took := time.Since(start)
		require.NoError(t, err, name)
		require.NotEmpty(t, h.Warnings, name)
		require.Less(t, took, 10*time.Second, name) // room for a loaded machine

		// Each line is reported where its form starts, as the decoder
		// reports an unclosed form.
		h, err = elle.Parse(strings.NewReader(opLine+strings.Repeat(line, 3)), "open.edn", elle.Options{Syntax: elle.EDN, Lenient: true})
		require.NoError(t, err, name)
		require.Len(t, h.Warnings, 4, name) // and the :invoke never completed
		for i, w := range h.Warnings[:3] {
			require.Equal(t, i+2, w.Pos.Line, name)
			require.Equal(t, "unexpected end of input inside a form (the form starts here); skipped to the next line", w.Msg, name)
		}
	}
}
