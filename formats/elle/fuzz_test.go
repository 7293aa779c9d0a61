package elle_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/formats/elle"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/shared"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
)

// fuzzOptions decodes the mode byte: bit 0 lenient, bits 1–2 the syntax,
// bits 3–4 the workload.
func fuzzOptions(mode uint8) elle.Options {
	return elle.Options{
		Lenient:  mode&1 != 0,
		Syntax:   elle.Syntax(mode >> 1 & 3),
		Workload: elle.Workload(mode >> 3 & 3 % 3),
	}
}

// FuzzParse: no input panics; a strict error is an *InputError on a line
// of the input; lenient mode always reads; a strict success reads the same
// leniently with the same warnings; a history is consistent, its hints name
// versions of their keys, and the hyper-polygraph steps that use them run.
func FuzzParse(f *testing.F) {
	dirs := []string{filepath.Join("..", "..", "testdata", "elle")}
	if d := shared.Dir(); d != "" {
		dirs = append(dirs, filepath.Join(d, "datasets", "elle"))
	}
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*.edn"))
		for _, p := range files {
			b, err := os.ReadFile(p)
			require.NoError(f, err)
			f.Add(b, uint8(0))
			f.Add(b, uint8(1))
		}
	}
	for _, s := range []string{
		`[{"index":0,"type":"invoke","process":3,"value":[["append",255,8],["r",253,null]]},{"index":1,"type":"ok","process":3,"value":[["append",255,8],["r",253,[1,3,4]]]}]`,
		"5\n1 1 A 1 10\n1 1 R 2 0\n2 2 R 1 1 10\n2 2 A 1 12\n3 3 R 1 2 10 12\n",
		"{:type :invoke, :process 0, :value [[:w :x 1] [:r :x nil]]}\n{:type :ok, :process 0, :value [[:w :x 1] [:r :x 1]]}\n",
		"(#jepsen.history.Op{:type :invoke, :process 0, :value [[:append 1 -2N]]} #_ 1 {:type :info :process 0})",
		"{:type :invoke, :process 0, :value [[:append 1 1]]}\n{:type :ok, :process 0, :value [[:append 1 1]]}}\n{:type :ok}\n",
		"{:type :ok, :process :a, :value [[:w \"k\" [:anti 3]] [:r [1 \"x\"] 1.5]]}\n{:type :ok, :process \"b\", :value [[:w [1 \"x\"] 1.5] [:r \"k\" nil]]}\n",
		"{:index 0, :type :invoke, :process 0, :f :init, :value {1 0, 2 1}}\n{:index 1, :type :ok, :process 0, :f :init, :value {1 0, 2 1}}\n{:index 2, :type :invoke, :process 1, :f :txn, :value [[:rp :true nil] [:insert 3 2] [:delete 1] [:r 1 nil]]}\n{:index 3, :type :ok, :process 1, :f :txn, :value [[:rp :true {2 1, 1 0}] [:insert 3 2] [:delete 1] [:r 1 nil]]}\n",
		"{:type :ok, :process 0, :value [[:rp [:= 1] {}] [:rp [:mod 2 0] {0 2}] [:w :x 1] [:rp :true {1 nil, 2 3}]]}\n{:type :info, :process 1, :f :init, :value {:x 1}}\n",
		`[{"index":0,"type":"ok","process":0,"f":"init","value":{"1":0,"x":1}},{"index":1,"type":"ok","process":1,"f":"txn","value":[["rp","true",{"1":0,"01":2}],["delete",1]]}]`,
		`[{"index":0,"type":"ok","process":0,"f":"init","value":{"1":0,"2":1}},{"index":1,"type":"ok","process":1,"f":"txn","value":[["rp",["=",1],{"2":1}],["rp",["mod",2,0],{"1":0}],["rp",["mod",0,1],{}],["insert",3,2]]}]`,
		"{:type :ok, :process 0, :f :init, :value {1 0, 2 1}}\n{:type :ok, :process 1, :value [[:rp [:= 1] {2 1}] [:rp [:mod -2 -1] {1 0}] [:rp [:= :x] {}] [:delete 2]]}\n",
		"{:type :invoke, :process 0, :value [[:append :x \\c]]}\n{:type :invoke, :process 0, :value [[:r :x nil]]}\n{:type :ok, :process 0, :value [[:append :x \\c]]}\n{:type :ok, :process 0, :value [[:r :x [\\c true]]]}\n",
	} {
		f.Add([]byte(s), uint8(0))
		f.Add([]byte(s), uint8(1))
	}
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		opt := fuzzOptions(mode)
		// Decoded as EDN in two chunks, as a large input is in parallel,
		// it reads as in one run; bits 5–7 place the cut.
		edn := opt
		edn.Syntax = elle.EDN
		whole, werr := elle.Parse(bytes.NewReader(data), "fuzz", edn)
		cut, cerr := elle.ParseCut(data, "fuzz", edn, []int{0, len(data) * int(mode>>5) / 8, len(data)})
		if werr != nil {
			require.EqualError(t, cerr, werr.Error())
		} else {
			require.NoError(t, cerr)
			require.Equal(t, whole, cut)
		}
		h, err := elle.Parse(bytes.NewReader(data), "fuzz", opt)
		sameAsGeneral(t, data, opt, h, err)
		if err != nil {
			require.False(t, opt.Lenient, "lenient mode failed: %v", err)
			var ie *history.InputError
			require.True(t, errors.As(err, &ie), "%T %v", err, err)
			require.Equal(t, "fuzz", ie.Pos.File)
			require.GreaterOrEqual(t, ie.Pos.Line, 1, "%v", err)
			require.LessOrEqual(t, ie.Pos.Line, bytes.Count(data, []byte{'\n'})+1, "%v", err)
			return
		}
		require.NoError(t, h.CheckInvariants())
		for _, vh := range h.VersionHints {
			require.True(t, vh.Key >= 0 && int(vh.Key) < len(h.Keys))
			require.True(t, vh.Before >= 0 && int(vh.Before) < len(h.Values[vh.Key]))
			require.True(t, vh.After >= 0 && int(vh.After) < len(h.Values[vh.Key]))
		}
		if !opt.Lenient {
			opt.Lenient = true
			hl, err := elle.Parse(bytes.NewReader(data), "fuzz", opt)
			require.NoError(t, err)
			require.Equal(t, describe(h), describe(hl))
			require.Equal(t, h.Warnings, hl.Warnings)
		}
		// What the EDN writer writes, names included, reads back.
		var out bytes.Buffer
		if len(h.Txns) > 1 && elle.Write(&out, h) == nil {
			_, err := elle.Parse(bytes.NewReader(out.Bytes()), "rewritten", elle.Options{})
			require.NoError(t, err, "%s", out.String())
		}
		for x, err := range h.ListExplanations(history.ListOptions{MaxExplanations: 64}) {
			if err != nil {
				break
			}
			for _, fd := range x.Findings {
				_ = fd.Describe(h)
			}
		}
		if len(h.Txns) <= 200 {
			g, viol := hyperpolygraph.Build(listViewH(t, h), history.SER, func(history.TxnID) bool { return true })
			if viol == nil {
				g.ApplyVersionHints(g.H.VersionHints)
				g.AddRealTime()
			}
		}
	})
}
