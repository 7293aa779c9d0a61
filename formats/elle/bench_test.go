package elle_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats/elle"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
	"github.com/hyperiso/hyperiso/strong/prune"
)

var (
	bigOnce sync.Once
	bigSrc  string
)

// big100k is a 100,000-transaction list-append history from the serial
// simulation: 10 workers, 100 live keys each retired after 32 appends,
// up to 4 micro-operations per transaction, 1% :fail, 0.5% :info.
func big100k() string {
	bigOnce.Do(func() {
		rng := rand.New(rand.NewPCG(100, 0))
		bigSrc = generate(rng, genCfg{mode: simSerial, procs: 10, txns: 100_000, keys: 100, maxOps: 4,
			failProb: 0.01, infoProb: 0.005, uniqueVals: true, rotate: 32})
	})
	return bigSrc
}

// BenchmarkParse100k reads the 100,000-transaction history.
func BenchmarkParse100k(b *testing.B) {
	src := big100k()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		h, err := elle.Parse(strings.NewReader(src), "big.edn", elle.Options{})
		require.NoError(b, err)
		require.Equal(b, 100_000, len(h.Txns)-1)
	}
}

// BenchmarkHints100k: Build at SER, ApplyVersionHints, AddRealTime and
// pruning of the 100,000-transaction history.
func BenchmarkHints100k(b *testing.B) {
	h, err := elle.Parse(strings.NewReader(big100k()), "big.edn", elle.Options{})
	require.NoError(b, err)
	v := listViewH(b, h)
	for b.Loop() {
		g, viol := hyperpolygraph.Build(v, history.SER, func(history.TxnID) bool { return true })
		require.Nil(b, viol)
		require.Nil(b, g.ApplyVersionHints(g.H.VersionHints))
		g.AddRealTime()
		_, _, c, err := prune.Prune(context.Background(), g, prune.Options{})
		require.NoError(b, err)
		require.Nil(b, c)
		b.ReportMetric(float64(len(g.WW)), "ww-left")
	}
}

// BenchmarkCheck100k: check.Check at SER as it is wired today.
func BenchmarkCheck100k(b *testing.B) {
	h, err := elle.Parse(strings.NewReader(big100k()), "big.edn", elle.Options{})
	require.NoError(b, err)
	for b.Loop() {
		res, err := check.Check(context.Background(), h, history.SER, check.Options{})
		require.NoError(b, err)
		require.NotEqual(b, check.Violated, res.Verdict, "%+v", res.Anomalies)
	}
}
