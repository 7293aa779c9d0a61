package elle

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"olympos.io/encoding/edn"
)

// reference decodes the operation map at data[0] as the reader did before
// the fast path: the EDN decoder, then convertEDN per field.
func reference(t *testing.T, data []byte) (rawOp, int, bool) {
	x, end, err := decodeOne(data, 0, bufio.NewReaderSize(nil, 4096), bytes.NewReader(nil))
	if err != nil {
		return rawOp{}, 0, false
	}
	m, ok := x.(map[any]any)
	if !ok {
		return rawOp{}, 0, false
	}
	var op rawOp
	for k, v := range m {
		if kw, ok := k.(edn.Keyword); ok {
			op.setField(string(kw), convertEDN(v))
		}
	}
	return op, end, true
}

// resolve decodes the :value the fast path only checked, as the builder
// does (parser.opValue), so that op compares with the decoder's.
func resolve(f *fastEDN, data []byte, op rawOp) rawOp {
	if op.valAt > 0 {
		f.reset()
		v := f.at(data, op.valAt)
		op.value, op.valAt = &v, 0
	}
	return op
}

// ednAtoms are values and near-values the fast path must read exactly as
// the decoder does, or leave to it.
var ednAtoms = []string{
	"0", "-0", "7", "-12", "123456789012345678", "-123456789012345678", "9223372036854775807",
	"-9223372036854775808", "9223372036854775808", "1N", "-2N", "1.5", "1e3", "+1", "01", "-", "1M",
	"nil", "nill", "true", "false", ":r", ":append", ":w", ":a.b", ":a/b", ":x?", ":9", ":", "::a",
	`"k"`, `""`, `"a b"`, `"é"`, `"a\"b"`, `"a\nb"`, "\\c", "sym", "#{1 2}", "{:a 1}", "#inst \"2020\"",
	"[]", "()", "[1 2]", "(:r 1 nil)", "[[:append 1 2] [:r 3 [1 2]]]", "#_ 1 2", "; c\n 3",
}

func randForm(rng *rand.Rand, depth int) string {
	if depth < 4 && rng.IntN(3) == 0 {
		open, closeB := "[", "]"
		if rng.IntN(4) == 0 {
			open, closeB = "(", ")"
		}
		parts := make([]string, rng.IntN(4))
		for i := range parts {
			parts[i] = randForm(rng, depth+1)
		}
		return open + strings.Join(parts, seps[rng.IntN(len(seps))]) + closeB
	}
	return ednAtoms[rng.IntN(len(ednAtoms))]
}

var seps = []string{" ", ", ", "\n", "\t", ",", "  "}

func randOpMap(rng *rand.Rand) string {
	keys := []string{":type", ":process", ":f", ":value", ":index", ":time", ":error", ":type", ":x"}
	var b strings.Builder
	b.WriteString("{")
	for i := range rng.IntN(7) {
		if i > 0 {
			b.WriteString(seps[rng.IntN(len(seps))])
		}
		b.WriteString(keys[rng.IntN(len(keys))])
		b.WriteString(" ")
		switch rng.IntN(4) {
		case 0:
			b.WriteString([]string{":invoke", ":ok", ":fail", ":info", ":txn", "3", "nil"}[rng.IntN(7)])
		default:
			b.WriteString(randForm(rng, 0))
		}
	}
	b.WriteString([]string{"}", "}\n{:type :ok}", "} ", "}}", ""}[rng.IntN(5)])
	return b.String()
}

// TestFastEDNMatchesDecoder: wherever the fast path reads an operation map,
// the EDN decoder reads the same fields and ends at the same offset; and
// it does read the common Jepsen shapes.
func TestFastEDNMatchesDecoder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	fastCount := 0
	for i := range 20000 {
		src := randOpMap(rng)
		var f fastEDN
		var got rawOp
		end, ok := f.opMap([]byte(src), 0, &got)
		if !ok {
			continue
		}
		fastCount++
		want, wend, wok := reference(t, []byte(src))
		require.True(t, wok, "case %d: fast path read %q, the decoder refuses it", i, src)
		require.Equal(t, wend, end, "case %d: %q", i, src)
		require.Equal(t, want, resolve(&f, []byte(src), got), "case %d: %q", i, src)
	}
	require.Greater(t, fastCount, 2000, "the fast path reads too few forms")
	for _, src := range []string{
		`{:type :invoke, :f :txn, :value [[:append 1 2] [:r 3 nil]], :time 123, :process 0, :index 0}`,
		`{:type :ok, :f :txn, :value [[:append 1 2] [:r 3 [1 2 3]]], :time 124, :process 0, :index 1}`,
		`{:index 2 :type :info :process "p" :value [[:w "x" 1]]}`,
	} {
		var f fastEDN
		var got rawOp
		end, ok := f.opMap([]byte(src), 0, &got)
		require.True(t, ok, src)
		want, wend, _ := reference(t, []byte(src))
		require.Equal(t, wend, end)
		require.Equal(t, want, resolve(&f, []byte(src), got), fmt.Sprint(src))
	}
}
