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

// The writers of integer registers (dbcop, text, AWDIT, Cobra) refuse
// inserts, deletes and predicate reads, naming each: written as plain
// writes and reads, a predicate read would become point reads of the keys
// of its range, silently. EDN holds them in Elle's closed-predicate syntax
// when each predicate read covers every key (Elle's [:rp :true …]), and
// refuses a narrower range, naming it; Viper holds inserts and ranges and
// refuses deletes, naming them (docs/formats.md).
func TestWritersRefuseRows(t *testing.T) {
	const src = `{"hyperiso":1,"init":"zero"}
{"session":1,"id":1,"ops":[["insert",1,1],["w",2,1]]}
{"session":2,"id":2,"ops":[["delete",1]]}
{"session":3,"id":3,"ops":[["select",{"keys":[0,10]},[[2,1]]]]}
`
	// A range that leaves key 20 out, and no delete.
	const narrow = `{"hyperiso":1,"init":"zero"}
{"session":1,"id":1,"ops":[["insert",1,1],["w",20,1]]}
{"session":3,"id":3,"ops":[["select",{"keys":[0,10]},[[1,1]]],["r",20,null]]}
`
	read := func(s string) *history.History {
		h, err := ReadStream(strings.NewReader(s), "rows.jsonl", Options{})
		require.NoError(t, err)
		return h
	}
	all := []string{
		"1 transactions with predicate reads (select) (first: T3(s3#0))",
		"1 transactions with inserts (first: T1(s1#0))",
		"1 transactions with deletes (first: T2(s2#0))",
	}
	narrowEDN := "1 predicate reads over a key range that is not every key of the history (first: T3(s3#0)'s keys [0,10))"
	viperDel := "1 transactions with deletes (first: T2(s2#0)): Viper names the delete"
	type writer = func(*history.History) error
	stream := func(w func(io.Writer, *history.History) error) writer {
		return func(h *history.History) error { return w(&bytes.Buffer{}, h) }
	}
	for _, c := range []struct {
		name          string
		write         writer
		want, wantNar []string // nil: written
	}{
		{"dbcop", stream(dbcop.Write), all, all[:2]},
		{"text", stream(text.Write), all, all[:2]},
		{"awdit", stream(awdit.Write), all, all[:2]},
		{"cobra", func(h *history.History) error {
			return cobra.Write(filepath.Join(t.TempDir(), "c"), h, cobra.WriteOptions{})
		}, all, all[:2]},
		{"edn", stream(elle.Write), nil, []string{narrowEDN}},
		{"viper", func(h *history.History) error { return viper.Write(filepath.Join(t.TempDir(), "v"), h) }, []string{viperDel}, nil},
	} {
		for i, h := range []*history.History{read(src), read(narrow)} {
			want := [][]string{c.want, c.wantNar}[i]
			err := c.write(h)
			if want == nil {
				require.NoError(t, err, c.name)
				continue
			}
			require.ErrorIs(t, err, ErrCannotHold, c.name)
			for _, s := range want {
				require.Contains(t, err.Error(), s, c.name)
			}
		}
	}
	var out bytes.Buffer
	require.NoError(t, jsonl.Write(&out, read(src)))
	require.Contains(t, out.String(), `["select",{"keys":[0,10]},[[2,1]]]`)
}
