package weak

import (
	"context"
	"flag"
	"github.com/hyperiso/hyperiso/cdcl"
	"strings"
	"testing"
	"time"

	"github.com/hyperiso/hyperiso/formats"
	"github.com/hyperiso/hyperiso/history"
)

var restartFlag = flag.Int("weak.restarts", 0, "restart policy")
var roundsFlag = flag.Int("weak.rounds", 16, "more-cycles rounds")
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
	debugRestarts = cdcl.RestartPolicy(*restartFlag)
	debugRounds = *roundsFlag
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

func TestHistorySCC(t *testing.T) {
	if *sharedPath == "" {
		t.Skip("run with -weak.history=PATH")
	}
	h, err := formats.Read(*sharedPath, formats.Options{Lenient: true})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	debugSCC = func(comps [][]history.TxnID) {
		calls++
		if calls%50 != 1 && calls > 40 {
			return
		}
		var sz []int
		for _, c := range comps {
			sz = append(sz, len(c))
		}
		t.Logf("call %d: %d comps sizes %v", calls, len(comps), sz)
	}
	defer func() { debugSCC = nil }()
	level, _ := history.ParseLevel(*largeLvls)
	res, err := Check(context.Background(), h, level, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %s; counters %v", level, res.Verdict, res.Counters)
}
