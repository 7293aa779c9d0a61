package check

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/hyperiso/hyperiso/history"
)

// checkLists checks a list-append history: it satisfies the level iff one
// of its explanations (history.ListExplanations: which unknown
// transactions committed, which appender wrote each element) has no
// finding the level forbids and a register view that satisfies it.
func checkLists(ctx context.Context, h *history.History, level history.Level, levels []history.Level, opt Options, res *Result) (*Result, error) {
	start := time.Now()
	opt.enter(res, "lists")
	var first *Result
	tried, undecided := 0, ""
	var engines time.Duration // spent in the register views' checks, not in "lists"
	defer func() { res.Counters["list_explanations"] = int64(tried) }()
	for x, err := range h.ListExplanations(history.ListOptions{Visibility: visibility(level)}) {
		if err != nil {
			if errors.Is(err, history.ErrTooManyExplanations) {
				undecided = fmt.Sprintf("the list reads have too many explanations to try (%v)", err)
				break
			}
			return res, inputError("%v", err)
		}
		tried++
		if err := ctx.Err(); err != nil {
			return res, err
		}
		sub := &Result{TimingsMS: map[string]float64{}, Counters: map[string]int64{}, Anomalies: []Anomaly{}}
		for _, f := range x.Findings {
			if f.ForbiddenAt(levelOf(levels, level, f.Txns[0])) {
				sub.Anomalies = append(sub.Anomalies, listAnomaly(h, f))
			}
		}
		if len(sub.Anomalies) > 0 || x.H == nil {
			sub.Verdict = Violated
		} else {
			t0 := time.Now()
			err := checkRegisters(ctx, x.H, level, levels, opt, sub)
			engines += time.Since(t0)
			if err != nil {
				return res, err
			}
			mapOps(sub, x)
		}
		for k, v := range sub.TimingsMS {
			res.TimingsMS[k] += v
		}
		switch sub.Verdict {
		case Satisfied:
			maps.Copy(res.Counters, sub.Counters)
			res.Verdict, res.Stage = Satisfied, sub.Stage
			if len(sub.Witness) > 0 {
				status := make(map[int64]string, len(h.Txns))
				for t := range h.Txns {
					status[h.Txns[t].ID] = h.Txns[t].Status.String()
				}
				for _, w := range sub.Witness {
					w.Status = status[w.ID]
					res.Witness = append(res.Witness, w)
				}
			}
			for _, v := range x.Views {
				lv := ListView{Txn: Ref(h, v.Txn), Op: int(v.Op)}
				for _, w := range v.Appenders {
					lv.Appenders = append(lv.Appenders, Ref(h, w))
				}
				res.ListViews = append(res.ListViews, lv)
			}
			res.TimingsMS["lists"] = ms(time.Since(start) - engines)
			return res, nil
		case Unknown:
			if undecided == "" {
				undecided = sub.Reason
			}
		default:
			if first == nil {
				first = sub
			}
		}
	}
	res.TimingsMS["lists"] = ms(time.Since(start) - engines)
	if undecided != "" || first == nil {
		res.Verdict, res.Reason = Unknown, undecided
		return res, nil
	}
	maps.Copy(res.Counters, first.Counters)
	res.Verdict, res.Stage = Violated, first.Stage
	res.Anomalies = first.Anomalies
	if tried > 1 {
		note := fmt.Sprintf(" (each of the %d ways to explain the list reads with repeated values or unknown outcomes fails; this is the first)", tried)
		for i := range res.Anomalies {
			res.Anomalies[i].Description += note
		}
	}
	return res, nil
}

// mapOps turns operation indices of a register view back into the
// original history's.
func mapOps(r *Result, x *history.ListExplanation) {
	for i := range r.Anomalies {
		a := &r.Anomalies[i]
		if a.Op == nil || len(a.Txns) == 0 {
			continue
		}
		// Anomalies locate the operation in their first transaction.
		for t, origin := range x.OpOrigin {
			if x.H.Txns[t].ID == a.Txns[0].ID && *a.Op < len(origin) && origin[*a.Op] >= 0 {
				op := int(origin[*a.Op])
				a.Op = &op
				break
			}
		}
	}
}

// visibility says which earlier blocks of a list read's view the register
// view states the reader saw, from the level's row: none where reads see
// a prefix of the version order, those no later block covers where
// visibility is transitive, all where levels are mixed, else those whose
// appender writes another key the reader reads.
func visibility(level history.Level) history.Visibility {
	r, _ := level.Row()
	switch {
	case r.SeesPrefix:
		return history.VisibleNone
	case r.TransitiveVis:
		return history.VisibleCovered
	case level == history.Mixed:
		return history.VisibleAll
	}
	return history.VisibleReadKeys
}
