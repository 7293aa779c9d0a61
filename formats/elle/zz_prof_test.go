package elle_test

import (
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/hyperiso/hyperiso/formats/elle"
)

func TestProfBig(t *testing.T) {
	path := os.Getenv("BIGEDN")
	if path == "" {
		t.Skip()
	}
	runtime.GC()
	t0 := time.Now()
	h, err := elle.Read(path, elle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	el := time.Since(t0)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("read %v, txns %d, heapalloc %d MB, sys %d MB, totalalloc %d MB", el, len(h.Txns), ms.HeapAlloc>>20, ms.Sys>>20, ms.TotalAlloc>>20)
	runtime.GC()
	runtime.ReadMemStats(&ms)
	t.Logf("after GC heapalloc %d MB", ms.HeapAlloc>>20)
	if p := os.Getenv("MEMPROF"); p != "" {
		f, _ := os.Create(p)
		pprof.Lookup("allocs").WriteTo(f, 0)
		f.Close()
	}
	runtime.KeepAlive(h)
}
