package jsonl

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestScannerStrings(t *testing.T) {
	for in, want := range map[string]string{
		`"plain"`:                            "plain",
		`""`:                                 "",
		`"\"\\\/\b\f\n\r\t"`:                 "\"\\/\b\f\n\r\t",
		`"\u00e9\u00E9"`:                     "éé",
		`"\ud83d\ude42"`:                     "🙂",
		`"\ud83d"`:                           "\ufffd",
		`"\ude42x"`:                          "\ufffdx",
		`"\ud83d\u0041"`:                     "\ufffdA",
		`"ünï \u0000"`:                       "ünï \x00",
		`"a\nb` + `\` + `u0062"`:             "a\nbb",
		`"` + strings.Repeat("x", 100) + `"`: strings.Repeat("x", 100),
	} {
		var sc scanner
		sc.reset([]byte(in))
		got, ok := sc.str("s")
		require.True(t, ok, "%s: %v", in, sc.err)
		require.Equal(t, want, string(got), in)
		require.Equal(t, len(in), sc.i, in)
	}
	for in, want := range map[string]string{
		`"\u12"`:      `expected 4 hex digits after \u`,
		`"\u12g4"`:    `expected 4 hex digits after \u`,
		`"\x"`:        `invalid escape \x`,
		`"abc\`:       "unterminated string",
		`"ab\"`:       "unterminated string",
		"\"a\x01\"":   "control character 0x01",
		"\"\\n\x1f\"": "control character 0x1f",
		`x`:           "expected a string, found 'x'",
	} {
		var sc scanner
		sc.reset([]byte(in))
		_, ok := sc.str("s")
		require.False(t, ok, in)
		require.Contains(t, sc.err.msg, want, in)
	}
}

func TestScannerSkip(t *testing.T) {
	for _, in := range []string{
		`1`, `-0`, `-1.5e+10`, `0.25E-3`, `1E5`, `true`, `false`, `null`, `"s\"t"`,
		`[]`, `[ 1 , [ 2 ] , { } ]`, `{"a":{"b":[null,true,{"c":"d"}]}, "e" : 1}`,
	} {
		var sc scanner
		sc.reset([]byte(in))
		require.True(t, sc.skip(0), "%s: %v", in, sc.err)
		require.Equal(t, len(in), sc.i, in)
	}
	for in, want := range map[string]string{
		`-`:                          "invalid number",
		`1.`:                         "invalid number",
		`1.e5`:                       "invalid number",
		`1e`:                         "invalid number",
		`1e+`:                        "invalid number",
		`tru`:                        "invalid literal, expected true",
		`nul`:                        "invalid literal, expected null",
		`fals`:                       "invalid literal, expected false",
		`[1 2]`:                      "expected ',' or ']'",
		`[1,`:                        "expected a JSON value, found end of line",
		`{"a" 1}`:                    "expected ':'",
		`{"a":1 "b":2}`:              "expected ',' or '}'",
		`{1:2}`:                      "field name: expected a string",
		`}`:                          "expected a JSON value",
		strings.Repeat("[", 500):     "nested more than 200 deep",
		strings.Repeat(`{"a":`, 300): "nested more than 200 deep",
	} {
		var sc scanner
		sc.reset([]byte(in))
		require.False(t, sc.skip(0), in)
		require.Contains(t, sc.err.msg, want, in)
	}
}

func TestScannerFound(t *testing.T) {
	for in, want := range map[string]string{
		"": "end of line", `"`: "a string", `[`: "an array", `{`: "an object", `-`: "a number",
		`true`: "a boolean", `false`: "a boolean", `null`: "null", "\x01": "byte 0x01", "é": "byte 0xc3",
		`t`: "'t'", `:`: "':'",
	} {
		var sc scanner
		sc.reset([]byte(in))
		require.Equal(t, want, sc.found(), in)
	}
	var sc scanner
	sc.reset([]byte(`1`))
	_, ok := sc.boolean("b")
	require.False(t, ok)
	require.Contains(t, sc.err.msg, "b: expected true or false, found a number")
}

func TestHeaderAndAbortedErrors(t *testing.T) {
	for in, want := range map[string]string{
		`{"hyperiso":1,"key_names":[1]}`:          `"key_names"[0]: a pair [key, "name"]`,
		`{"hyperiso":1,"key_names":[[1]]}`:        `"key_names"[0]: ','`,
		`{"hyperiso":1,"key_names":[[1,2]]}`:      `"key_names"[0] name: expected a string`,
		`{"hyperiso":1,"key_names":[["1","a"]]}`:  `"key_names"[0] key: expected an integer`,
		`{"hyperiso":1,"key_names":[[1,"a",2]]}`:  `']' (a pair has two elements)`,
		`{"hyperiso":1,"key_names":{}}`:           `"key_names": an array '['`,
		`{"hyperiso":1,"sessions":[1,"2"]}`:       `"sessions" element: expected an integer`,
		`{"hyperiso":1,"sessions":[1 2]}`:         `"sessions": ',' or ']'`,
		`{"hyperiso":1,"meta":[]}`:                `"meta": an object '{'`,
		`{"hyperiso":1,"meta":{"a":"b" "c":"d"}}`: `"meta": ',' or '}'`,
		`{"hyperiso":1,"meta":{"a" "b"}}`:         `expected ':'`,
		`{"hyperiso":1,"meta":{1:"b"}}`:           `"meta" key: expected a string`,
		`{"hyperiso":"1"}`:                        `"hyperiso": expected an integer`,
		`{"aborted_writes":[1]}`:                  `"aborted_writes": a pair [key, value]`,
		`{"aborted_writes":[[1.5,2]]}`:            `aborted write key: expected an integer`,
		`{"aborted_writes":[[1 2]]}`:              `aborted write: ','`,
		`{"aborted_writes":[[1,null]]}`:           `aborted write value: expected an integer or a string`,
		`{"session":1,"ops":[["r",1,[1 2]]]}`:     `ops[0]: expected ',' or ']' in the list`,
		`{"session":1,"ops":[["r",1,2 3]]}`:       `ops[0]: expected ']' after the value`,
		`{"session":1,"ops":[[1,1,2]]}`:           `ops[0] operation name: expected a string`,
		`{"session":1,"ops":[["r" 1,2]]}`:         `expected 3 elements [op, key, value], found a number after the name`,
		`{"session":1,"ops":{}}`:                  `"ops": an array '['`,
		`{"session":1,"ops":[]`:                   `expected ',' or '}' after a field`,
		`{"session" 1}`:                           `expected ':' after a field name`,
		`{"init":1}`:                              `"init": expected a string, found a number`,
	} {
		_, err := Parse(strings.NewReader(in), "m", Options{})
		require.Error(t, err, in)
		require.Contains(t, err.Error(), want, in)
	}
}

func TestStatusAndLevelNames(t *testing.T) {
	h := parse(t, `{"session":1,"ops":[],"status":"aborted","level":"read-committed"}
{"session":1,"ops":[],"status":"unknown","level":"RA"}
{"session":1,"ops":[],"level":"causal"}
{"session":1,"ops":[],"level":"snapshot"}`, Options{})
	require.Equal(t, "S1: T1/aborted/rc[] T2/unknown/ra[] T3/cc[] T4/si[]; init implicit T-1[]", describe(h))
}
