package check

import (
	"context"
	"fmt"
	"strings"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/strong"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
)

// mixedLevels resolves, for a mixed check, each transaction's level (its
// own, else opt.DefaultLevel) and refuses what the mixed check does not
// take: a transaction without a level and no default, strict SER or mixed
// as a transaction's level, and real time.
func mixedLevels(h *history.History, opt Options) ([]history.Level, error) {
	if opt.RealTime {
		return nil, inputError("mixed levels take no real-time order (--realtime); a strict-ser transaction has no place in MixIso")
	}
	if r, _ := opt.DefaultLevel.Row(); opt.DefaultLevel != history.LevelNone && !r.Declarable {
		return nil, inputError("the default level must be one of %s (got %s)", history.LevelList(", ", history.IsDeclarable), opt.DefaultLevel)
	}
	levels, err := strong.Levels(h, opt.DefaultLevel)
	if err != nil {
		return nil, inputError("%v", err)
	}
	return levels, nil
}

// uniformShortcut lets a mixed check whose transactions share one weak
// level try that level first; tests turn it off to compare the engines.
var uniformShortcut = true

// uniformWeak decides a history whose transactions are all held to one
// weak level (RC, RA, CC) at that level, and returns the result when it
// is satisfied (nil otherwise). The mixed semantics is then that level's
// (TestUniformMixedIsItsLevel), and saturation settles it far faster than
// the mixed search: a collected history whose every transaction declares
// rc took minutes. A violation is left to the mixed engine, which says
// whose level breaks and how.
func uniformWeak(ctx context.Context, h *history.History, levels []history.Level, opt Options) *Result {
	if !uniformShortcut || len(levels) < 2 {
		return nil
	}
	l := levels[1]
	for _, x := range levels[2:] {
		if x != l {
			return nil
		}
	}
	if r, ok := l.Row(); !ok || r.Engine != history.Weak {
		return nil
	}
	sub, err := Check(ctx, h, l, opt)
	if err != nil || sub.Verdict != Satisfied {
		return nil
	}
	return sub
}

// levelOf is the level a finding about t is judged at: t's own in a mixed
// check, else the level checked.
func levelOf(levels []history.Level, level history.Level, t history.TxnID) history.Level {
	if levels != nil && int(t) < len(levels) {
		return levels[t]
	}
	return level
}

// blameWords says in plain words whose axiom a mixed-level refutation
// breaks and why; levels are the transactions' levels.
func blameWords(h *history.History, levels []history.Level, b *hyperpolygraph.Blame) string {
	name := func(t history.TxnID) string { return h.TxnString(t) }
	who := fmt.Sprintf("%s ran at %s", name(b.Txn), b.Level.Words())
	key := ""
	if b.Key >= 0 {
		key = " of key " + h.KeyString(b.Key)
	}
	via := ""
	if len(b.Via) > 0 {
		var vs []string
		for _, v := range b.Via {
			vs = append(vs, name(v))
		}
		via = " (through " + strings.Join(vs, ", ") + ")"
	}
	// overwrite names the seen writer whose write hides the version read.
	overwrite := func() string {
		if b.Saw == b.Missed {
			return fmt.Sprintf("%s%s, whose write%s overwrote the version it read", name(b.Saw), via, key)
		}
		return fmt.Sprintf("%s%s, whose write%s came after %s overwrote the version it read", name(b.Saw), via, key, name(b.Missed))
	}
	var why string
	switch {
	case b.Axiom == "INT":
		why = "but its own reads disagree with its own earlier operations"
	case b.Axiom == "TOTALVis" || b.Axiom == "PREFIX":
		what := "sees everything before it"
		if b.Axiom == "PREFIX" {
			what = "sees everything before what it sees"
		}
		if b.Saw >= 0 {
			why = fmt.Sprintf("so it %s; it saw %s without %s, which every order consistent with the history puts before %s, and read the version%s that %s overwrote", what, name(b.Saw), name(b.Missed), name(b.Saw), key, name(b.Missed))
		} else {
			why = fmt.Sprintf("so it %s, yet it read the version%s that %s overwrote, which every order consistent with the history puts before it", what, key, name(b.Missed))
		}
	case b.Axiom == "TRANSVis" && b.Saw >= 0 && b.Saw != b.Missed && prefixLevel(levels, b.Saw):
		why = fmt.Sprintf("so it sees what the transactions it sees saw; it saw %s%s, which ran at %s and so saw %s, yet it read the version%s that %s overwrote", name(b.Saw), via, levels[b.Saw].Words(), name(b.Missed), key, name(b.Missed))
	case b.Axiom == "TRANSVis":
		why = fmt.Sprintf("so it sees what the transactions it sees saw; it saw %s", overwrite())
	case b.Axiom == "SESSION":
		why = fmt.Sprintf("so it sees its session predecessor %s", overwrite())
	case b.Axiom == "NoConflict" && b.Missed >= 0:
		why = fmt.Sprintf("so it sees every earlier writer of the keys it writes, among them %s", overwrite())
	case b.Axiom == "NoConflict":
		why = fmt.Sprintf("so it must see %s, which wrote%s before it, but no order lets it", name(b.Saw), key)
	case b.Missed >= 0 && b.Level.ReadsApart(): // EXT, read by read
		why = fmt.Sprintf("so its reads never see less than its earlier ones; an earlier read saw %s%s, yet a later read returned a version%s older than %s's", name(b.Saw), via, key, name(b.Saw))
	case b.Missed >= 0: // EXT
		why = fmt.Sprintf("and read from %s (a fractured read)", overwrite())
	default:
		why = "but what it read and its session order go round in a circle, which no order of the transactions explains"
	}
	return fmt.Sprintf("%s, %s (%s)", who, why, b.Axiom)
}

func prefixLevel(levels []history.Level, t history.TxnID) bool { return levels[t].SeesPrefix() }
