package formats

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/formats/awdit"
	"github.com/hyperiso/hyperiso/formats/cobra"
	"github.com/hyperiso/hyperiso/formats/dbcop"
	"github.com/hyperiso/hyperiso/formats/elle"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/formats/text"
	"github.com/hyperiso/hyperiso/formats/viper"
	"github.com/hyperiso/hyperiso/history"
)

// Every writer but JSONL refuses inserts, deletes and predicate reads,
// naming each: written as plain writes and reads, a predicate read would
// become point reads of the keys of its range, silently.
func TestWritersRefuseRows(t *testing.T) {
	const src = `{"hyperiso":1,"init":"zero"}
{"session":1,"id":1,"ops":[["insert",1,1],["w",2,1]]}
{"session":2,"id":2,"ops":[["delete",1]]}
{"session":3,"id":3,"ops":[["select",{"keys":[0,10]},[[2,1]]]]}
`
	h, err := ReadStream(strings.NewReader(src), "rows.jsonl", Options{})
	require.NoError(t, err)
	want := []string{
		"1 transactions with predicate reads (select) (first: T3(s3#0))",
		"1 transactions with inserts (first: T1(s1#0))",
		"1 transactions with deletes (first: T2(s2#0))",
	}
	stream := func(w func(io.Writer, *history.History) error) func() error {
		return func() error { return w(&bytes.Buffer{}, h) }
	}
	for name, write := range map[string]func() error{
		"dbcop": stream(dbcop.Write), "text": stream(text.Write), "awdit": stream(awdit.Write), "edn": stream(elle.Write),
		"viper": func() error { return viper.Write(filepath.Join(t.TempDir(), "v"), h) },
		"cobra": func() error { return cobra.Write(filepath.Join(t.TempDir(), "c"), h, cobra.WriteOptions{}) },
	} {
		err := write()
		require.ErrorIs(t, err, ErrCannotHold, name)
		for _, s := range want {
			require.Contains(t, err.Error(), s, name)
		}
	}
	var out bytes.Buffer
	require.NoError(t, jsonl.Write(&out, h))
	require.Contains(t, out.String(), `["select",{"keys":[0,10]},[[2,1]]]`)
}
