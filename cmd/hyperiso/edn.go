package main

import (
	"io"
	"slices"
	"strings"

	"olympos.io/encoding/edn"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats/elle"
	"github.com/hyperiso/hyperiso/history"
)

// elleModel names a level as Elle's consistency models do (the level
// table's Elle column); hyperiso's SER and SI contain session order, which
// Elle calls strong session.
func elleModel(level string) edn.Keyword {
	l, _ := history.ParseLevel(level)
	r, _ := l.Row()
	return edn.Keyword(r.Elle)
}

// ednResult is the result map, with its keys in a fixed order. Source,
// Levels and StrongestSatisfied are hyperiso's: the file when a run reads
// several, each level's verdict and the strongest satisfied when it asks
// several.
type ednResult struct {
	Valid              any                          `edn:"valid?"`
	Source             string                       `edn:"source,omitempty"`
	Level              edn.Keyword                  `edn:"level,omitempty"`
	Levels             edn.RawMessage               `edn:"levels,omitempty"`
	StrongestSatisfied map[edn.Keyword]bool         `edn:"strongest-satisfied,omitempty"`
	AnomalyTypes       []edn.Keyword                `edn:"anomaly-types"`
	Anomalies          map[edn.Keyword][]ednAnomaly `edn:"anomalies,omitempty"`
	Not                map[edn.Keyword]bool         `edn:"not,omitempty"`
	AlsoNot            map[edn.Keyword]bool         `edn:"also-not,omitempty"`
	Error              string                       `edn:"error,omitempty"`
}

type ednAnomaly struct {
	Type        edn.Keyword `edn:"type"`
	Description string      `edn:"description"`
	Txns        []int64     `edn:"txns"`
	Steps       []ednStep   `edn:"steps,omitempty"`
}

type ednStep struct {
	Type edn.Keyword `edn:"type"`
	From int64       `edn:"from"`
	To   int64       `edn:"to"`
	// Key is the key as read: an integer, or a name as EDN text.
	Key         any    `edn:"key,omitempty"`
	Explanation string `edn:"explanation"`
}

// writeEDN prints res as an Elle-style result map, so that a Jepsen test
// can read hyperiso's answer where it reads Elle's: :valid? (true, false or
// :unknown), :anomaly-types, :anomalies (per type, each with its
// transactions and the steps of its cycle), :not, the model ruled out, and
// :also-not, the stronger models it rules out with it.
func writeEDN(w io.Writer, res *check.Result) error { return writeEDNSource(w, res, "") }

// writeEDNSource is writeEDN naming the file (several files in one run).
func writeEDNSource(w io.Writer, res *check.Result, source string) error {
	out := ednResult{Source: source, Level: elleModel(res.Level), AnomalyTypes: []edn.Keyword{}}
	switch res.Verdict {
	case check.Satisfied:
		out.Valid = true
	case check.Violated:
		out.Valid = false
		l, _ := history.ParseLevel(res.Level)
		out.Not, out.AlsoNot = ellesSet([]history.Level{l}), ellesSet(alsoNot([]history.Level{l}))
	default:
		out.Valid = edn.Keyword("unknown")
		out.Error = res.Reason
	}
	out.addAnomalies(res.Anomalies)
	return out.write(w)
}

// writeLevelsEDN prints the report of several levels as one Elle result
// map: :valid? false when a level is violated (:unknown when none is but
// one is unknown), the anomalies found (each once), :not the weakest
// violated models and :also-not the stronger ones they rule out too, and
// hyperiso's :levels (each model's verdict: true, false, :unknown or
// :skipped) and :strongest-satisfied.
func writeLevelsEDN(w io.Writer, rep *levelsReport, source string) error {
	out := ednResult{Source: source, Valid: true, AnomalyTypes: []edn.Keyword{}}
	var reasons, levels []string
	for _, r := range history.Levels { // in the table's order, strongest first
		verdict := ""
		if e, ok := rep.level(r.Level); ok {
			switch e.Verdict {
			case check.Satisfied:
				verdict = "true"
			case check.Violated:
				verdict = "false"
				out.Valid = false
			default:
				verdict = ":unknown"
				if out.Valid == true {
					out.Valid = edn.Keyword("unknown")
				}
				reasons = append(reasons, e.Level+": "+e.Reason)
			}
		} else if slices.ContainsFunc(rep.Skipped, func(s skippedLevel) bool { return s.Level == r.Name }) {
			verdict = ":skipped"
		}
		if verdict != "" {
			levels = append(levels, ":"+string(elleModel(r.Name))+" "+verdict)
		}
	}
	out.Levels = edn.RawMessage("{" + strings.Join(levels, ", ") + "}")
	if out.Valid != false && len(reasons) > 0 {
		out.Error = strings.Join(reasons, "; ")
	}
	var strongest, weakest []history.Level
	for _, n := range rep.StrongestSatisfied {
		l, _ := history.ParseLevel(n)
		strongest = append(strongest, l)
	}
	for _, n := range rep.WeakestViolated {
		l, _ := history.ParseLevel(n)
		weakest = append(weakest, l)
	}
	out.StrongestSatisfied = ellesSet(strongest)
	out.Not, out.AlsoNot = ellesSet(weakest), ellesSet(alsoNot(weakest))
	own, _ := rep.ownAnomalies()
	for i := len(rep.Levels) - 1; i >= 0; i-- {
		out.addAnomalies(own[rep.Levels[i].Level])
	}
	return out.write(w)
}

// writeEDNError prints the map of a file that could not be checked.
func writeEDNError(w io.Writer, source, msg string) error {
	out := ednResult{Valid: edn.Keyword("unknown"), Source: source, AnomalyTypes: []edn.Keyword{}, Error: msg}
	return out.write(w)
}

// ellesSet is the set of Elle's names of ls; nil when empty.
func ellesSet(ls []history.Level) map[edn.Keyword]bool {
	if len(ls) == 0 {
		return nil
	}
	out := map[edn.Keyword]bool{}
	for _, l := range ls {
		out[elleModel(l.String())] = true
	}
	return out
}

// addAnomalies adds as to out's :anomalies and :anomaly-types.
func (out *ednResult) addAnomalies(as []check.Anomaly) {
	for _, a := range as {
		name := edn.Keyword(a.Type)
		if a.Class != "" && a.Class != "internal" {
			name = edn.Keyword(a.Class)
		}
		if out.Anomalies == nil {
			out.Anomalies = map[edn.Keyword][]ednAnomaly{}
		}
		if _, seen := out.Anomalies[name]; !seen {
			out.AnomalyTypes = append(out.AnomalyTypes, name)
		}
		e := ednAnomaly{Type: name, Description: a.Description}
		for _, t := range a.Txns {
			e.Txns = append(e.Txns, t.ID)
		}
		for _, ed := range a.Edges {
			st := ednStep{Type: edn.Keyword(ed.Relation), From: ed.From, To: ed.To, Explanation: ed.Reason}
			switch {
			case ed.KeyName != "":
				st.Key = edn.RawMessage(elle.EDNText(ed.KeyName))
			case ed.Key != nil:
				st.Key = *ed.Key
			}
			e.Steps = append(e.Steps, st)
		}
		out.Anomalies[name] = append(out.Anomalies[name], e)
	}
	slices.Sort(out.AnomalyTypes)
}

func (out *ednResult) write(w io.Writer) error {
	b, err := edn.MarshalIndent(out, "", " ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
