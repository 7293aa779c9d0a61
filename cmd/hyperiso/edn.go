package main

import (
	"io"
	"slices"

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

// ednResult is the result map, with its keys in a fixed order.
type ednResult struct {
	Valid        any                          `edn:"valid?"`
	Level        edn.Keyword                  `edn:"level"`
	AnomalyTypes []edn.Keyword                `edn:"anomaly-types"`
	Anomalies    map[edn.Keyword][]ednAnomaly `edn:"anomalies,omitempty"`
	Not          map[edn.Keyword]bool         `edn:"not,omitempty"`
	Error        string                       `edn:"error,omitempty"`
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
// transactions and the steps of its cycle), and :not, the model ruled out.
func writeEDN(w io.Writer, res *check.Result) error {
	out := ednResult{Level: elleModel(res.Level), AnomalyTypes: []edn.Keyword{}}
	switch res.Verdict {
	case check.Satisfied:
		out.Valid = true
	case check.Violated:
		out.Valid = false
		out.Not = map[edn.Keyword]bool{out.Level: true}
	default:
		out.Valid = edn.Keyword("unknown")
		out.Error = res.Reason
	}
	for _, a := range res.Anomalies {
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
	b, err := edn.MarshalIndent(out, "", " ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
