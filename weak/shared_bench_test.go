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

var unknownEvery = flag.Int("weak.unknown-every", 0, "TestHistoryFile: mark every N-th committed transaction of the file as of unknown status")
var sharedPath = flag.String("weak.history", "", "TestHistoryFile: check this history file (any format) at -weak.levels")

// TestHistoryFile measures one check per level of a history file; it runs
// only with -weak.history=PATH. With -weak.unknown-every=10 every tenth
// transaction is taken as of unknown status (a deterministic history with
// 1,000 of them among 10k).
func TestHistoryFile(t *testing.T) {
	if *sharedPath == "" {
		t.Skip("run with -weak.history=PATH")
	}
	h, err := formats.Read(*sharedPath, formats.Options{Lenient: true})
	if err != nil {
		t.Fatal(err)
	}
	if k := *unknownEvery; k > 0 {
		marked := 0
		for t := 1; t < len(h.Txns); t++ {
			if t%k == 0 && h.Txns[t].Status == history.Committed {
				h.Txns[t].Status = history.Unknown
				marked++
			}
		}
		t.Logf("%d transactions marked unknown", marked)
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
