package formats

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/hyperiso/hyperiso/formats/cobra"
	"github.com/hyperiso/hyperiso/formats/dbcop"
	"github.com/hyperiso/hyperiso/formats/elle"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/formats/text"
	"github.com/hyperiso/hyperiso/history"
)

// scaleHistory is a history in the paper's scalability setting — 50
// sessions, 20 operations per transaction, half reads, 50,000 keys — with
// 65,536 committed transactions; each write installs a fresh value and
// each read returns the key's latest value, as a serial run would.
func scaleHistory() *history.History {
	const txns, ops, keys = 1 << 16, 20, 50000
	rng := rand.New(rand.NewPCG(11, 11))
	b := history.NewBuilder("gen", "test")
	b.SetInit(history.InitImplicit, 0)
	latest := make([]int64, keys)
	next := int64(1)
	for i := range txns {
		t := b.Begin(b.Session(int64(i%50+1)), int64(i+1), history.Committed, history.Pos{})
		for range ops {
			k := rng.IntN(keys)
			if rng.IntN(2) == 0 {
				b.Read(t, int64(k+1), latest[k])
				continue
			}
			latest[k] = next
			b.Write(t, int64(k+1), next)
			next++
		}
	}
	b.InitAllKeys(0)
	return b.Finish()
}

// benchInputs writes scaleHistory in each format to a temporary directory
// removed after the benchmark.
func benchInputs(b *testing.B) map[string]string {
	var benchErr error
	benchFiles := map[string]string{}
	func() {
		dir := b.TempDir()
		h := scaleHistory()
		for name, write := range map[string]func(*os.File) error{
			"jsonl": func(f *os.File) error { return jsonl.Write(f, h) },
			"dbcop": func(f *os.File) error { return dbcop.Write(f, h) },
			"text":  func(f *os.File) error { return text.Write(f, h) },
			"elle":  func(f *os.File) error { return elle.Write(f, h) },
		} {
			p := filepath.Join(dir, "history."+name)
			if name == "dbcop" {
				p = filepath.Join(dir, "history.bincode")
			}
			if name == "elle" {
				p = filepath.Join(dir, "history.edn")
			}
			f, err := os.Create(p)
			if err != nil {
				benchErr = err
				return
			}
			if err := write(f); err != nil {
				benchErr = err
				return
			}
			if err := f.Close(); err != nil {
				benchErr = err
				return
			}
			benchFiles[name] = p
		}
		p := filepath.Join(dir, "cobra")
		if err := cobra.Write(p, h, cobra.WriteOptions{}); err != nil {
			benchErr = err
			return
		}
		benchFiles["cobra"] = p
	}()
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchFiles
}

// size is the bytes a path holds (a directory's files summed).
func size(b *testing.B, path string) int64 {
	var n int64
	err := filepath.WalkDir(path, func(_ string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkReadFormats reads the same 65,536-transaction, 1.3M-operation
// history from a file (or Cobra directory) in each format; MB/s is the
// reading throughput the targets are about.
func BenchmarkReadFormats(b *testing.B) {
	files := benchInputs(b)
	for _, format := range []string{"jsonl", "dbcop", "text", "cobra", "elle"} {
		b.Run(format, func(b *testing.B) {
			path := files[format]
			b.SetBytes(size(b, path))
			for b.Loop() {
				h, err := Read(path, Options{Format: format})
				if err != nil {
					b.Fatal(err)
				}
				if len(h.Txns) != 1<<16+1 {
					b.Fatalf("%d transactions", len(h.Txns)-1)
				}
			}
		})
	}
}

// BenchmarkReadFile reads the history named by HYPERISO_READ_BENCH_FILE
// (skipped when unset), to profile a reader on a large real file, such as
// a 1M-transaction scale history, without the generated inputs' setup.
func BenchmarkReadFile(b *testing.B) {
	path := os.Getenv("HYPERISO_READ_BENCH_FILE")
	if path == "" {
		b.Skip("HYPERISO_READ_BENCH_FILE not set")
	}
	b.SetBytes(size(b, path))
	for b.Loop() {
		if _, err := Read(path, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
