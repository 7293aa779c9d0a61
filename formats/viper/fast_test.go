package viper

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/hyperiso/hyperiso/history"
)

// sameAsGeneral checks that data reads as with the fast path turned off:
// the same history (warnings included) or the same error.
func sameAsGeneral(t *testing.T, data []byte, lenient bool, h *history.History, err error) {
	t.Helper()
	forceGeneral = true
	hg, errg := Parse(bytes.NewReader(data), "J1.log", Options{Lenient: lenient})
	forceGeneral = false
	if fmt.Sprint(err) != fmt.Sprint(errg) {
		t.Fatalf("%q: fast path error %v, general path %v", data, err, errg)
	}
	if err == nil && !reflect.DeepEqual(h, hg) {
		t.Fatalf("%q: fast path read\n%s\ngeneral path\n%s", data, describe(h), describe(hg))
	}
}

// TestFastPathAgrees reads random logs, well-formed lines and lines with
// one piece replaced by something near it (another number, spacing,
// literal, field name, escape, a piece cut off), with the fast path and
// without: every history, warning and error must be the same.
func TestFastPathAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	num := func() string {
		return pick("0", "1", "7", "-3", "42", "-0", "01", "1.0", "1e3", "9223372036854775807",
			"-9223372036854775808", "9223372036854775808", "-9223372036854775809", "18446744073709551616",
			"null", `"nil"`, `"7"`, "true", "")
	}
	ws := func() string { return pick("", "", "", " ", "\t", "  ", "\r") }
	op := func() string {
		k := pick(`"r"`, `"w"`, `"r"`, `"w"`, `"i"`, `"\u0072"`, `"R"`, "null")
		parts := []string{k, num(), num(), pick("true", "false", "null", "1", `"true"`)}
		if rng.IntN(4) > 0 {
			// Mostly plausible keys and values.
			parts[1] = fmt.Sprint(rng.IntN(4))
			parts[2] = pick(fmt.Sprint(rng.IntN(4)), "null", `"nil"`)
		}
		if rng.IntN(20) == 0 {
			parts = parts[:rng.IntN(4)]
		}
		if rng.IntN(20) == 0 {
			parts = append(parts, "1")
		}
		for i := range parts {
			parts[i] = ws() + parts[i] + ws()
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	line := func() string {
		var ops []string
		for range rng.IntN(5) {
			ops = append(ops, op())
		}
		fields := []string{ws() + `"value"` + ws() + ":" + ws() + "[" + strings.Join(ops, ","+ws()) + "]" + ws()}
		switch rng.IntN(8) {
		case 0:
			fields = append(fields, ws()+`"isInitial"`+ws()+":"+ws()+pick("true", "false", "null", "1")+ws())
		case 1:
			fields = append([]string{`"isInitial": ` + pick("true", "false")}, fields...)
		case 2:
			fields = append(fields, pick(`"value": []`, `"isinitial": true`, `"other": 1`, `"isInitial": true, "isInitial": false`))
		case 3:
			fields[0] = pick(`"Value": []`, `"v\u0061lue": []`, `"value": null`, `"value": {}`, "")
		}
		s := ws() + "{" + strings.Join(fields, ",") + "}" + ws()
		switch rng.IntN(30) {
		case 0:
			s = s[:rng.IntN(len(s)+1)]
		case 1:
			s += " x"
		case 2:
			s = "\ufeff" + s
		case 3:
			s = strings.Replace(s, `"w"`, "\"w\xff\"", 1)
		}
		return s
	}
	for i := range 4000 {
		var sb strings.Builder
		for range 1 + rng.IntN(4) {
			sb.WriteString(line())
			sb.WriteString(pick("\n", "\n", "\r\n"))
		}
		data := []byte(sb.String())
		lenient := i%2 == 1
		h, err := Parse(bytes.NewReader(data), "J1.log", Options{Lenient: lenient})
		sameAsGeneral(t, data, lenient, h, err)
	}
}

// TestFastPathTaken checks that the lines Viper writes do take the fast
// path (a test of the equivalence alone would pass with none taken).
func TestFastPathTaken(t *testing.T) {
	var l fastLine
	for _, s := range []string{
		`{"value": [["r", 5125, 0, false], ["w", 45650, 1000000001, true]]}`,
		`{"value": [["r", 1, null, false], ["r", 2, "nil", true], ["w", 3, -4, false]], "isInitial": false}`,
		`{"value": []}`,
		` { "isInitial" : true , "value" : [ [ "w" , -9223372036854775807 , 9223372036854775807 , true ] ] } `,
	} {
		if !scanFast([]byte(s), &l) {
			t.Errorf("%s: not read by the fast path", s)
		}
	}
	if !scanFast([]byte(`{"value": [["w", 3, -4, false]], "isInitial": true}`), &l) ||
		!reflect.DeepEqual(l, fastLine{ops: []fastOp{{'a', 3, -4}}, initial: true}) {
		t.Errorf("read %+v", l)
	}
}
