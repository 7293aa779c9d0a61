package jsonl

import (
	"bytes"
	"testing"

	"github.com/hyperiso/hyperiso/history"
)

// BenchmarkScanOnly measures the line scanner alone (no Builder), to tell
// the format's own cost from interning's.
func BenchmarkScanOnly(b *testing.B) {
	var buf bytes.Buffer
	if err := Write(&buf, genHistory(100000, 10)); err != nil {
		b.Fatal(err)
	}
	lines := bytes.Split(buf.Bytes(), []byte("\n"))
	p := &parser{b: history.NewBuilder("x", "y")}
	b.SetBytes(int64(buf.Len()))
	for b.Loop() {
		for _, l := range lines {
			if len(l) == 0 {
				continue
			}
			p.sc.reset(l)
			if !p.object() {
				b.Fatal(p.sc.err.msg)
			}
		}
	}
	b.ReportMetric(float64(b.N)*1e6/b.Elapsed().Seconds(), "ops/s")
}

// BenchmarkReadSmallValues reads 100k transactions whose values come from a
// small per-key domain (as in dbcop and text histories), so that interning
// touches small maps.
func BenchmarkReadSmallValues(b *testing.B) {
	hb := history.NewBuilder("gen", "test")
	hb.SetInit(history.InitImplicit, -1)
	for i := range 100000 {
		t := hb.Begin(hb.Session(int64(i%50)), int64(i+1), history.Committed, history.Pos{})
		for j := range 10 {
			k := int64((i*7 + j*13) % 1000)
			if j%2 == 0 {
				hb.Write(t, k, int64(i))
			} else {
				hb.Read(t, k, int64(i-j))
			}
		}
	}
	hb.InitAllKeys(0)
	var buf bytes.Buffer
	if err := Write(&buf, hb.Finish()); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	for b.Loop() {
		if _, err := Parse(bytes.NewReader(buf.Bytes()), "gen.jsonl", Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*1e6/b.Elapsed().Seconds(), "ops/s")
}
