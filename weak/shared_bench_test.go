package weak

import (
	"context"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/hyperiso/hyperiso/formats"
	"github.com/hyperiso/hyperiso/history"
)

var sharedPath = flag.String("weak.history", "", "TestHistoryFile: check this history file (any format) at -weak.levels")

// TestHistoryFile measures one check per level of a history file; it runs
// only with -weak.history=PATH.
func TestHistoryFile(t *testing.T) {
	if *sharedPath == "" {
		t.Skip("run with -weak.history=PATH")
	}
	h, err := formats.Read(*sharedPath, formats.Options{Lenient: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range strings.Split(*largeLvls, ",") {
		level, ok := history.ParseLevel(name)
		if !ok {
			t.Fatalf("bad level %q", name)
		}
		start := time.Now()
		res, err := Check(context.Background(), h, level, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %s in %.2fs; timings %v; counters %v", level, res.Verdict, time.Since(start).Seconds(), res.Timings, res.Counters)
	}
}
