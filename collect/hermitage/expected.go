package hermitage

import (
	"fmt"
	"strings"
)

// Expected is the matrix recorded on PostgreSQL 15.20 and MariaDB
// 10.11.19 (docs/hermitage.md): per target kind and level, each
// scenario's entry (Cell.String) in Scenarios order. The tests assert
// that a run reproduces it.
var Expected = map[string]map[string]string{
	"postgres": {
		"read-committed":  "ok ok RA SER RA SI RA SI SI SER RA RA SER SER SI",
		"repeatable-read": "ok ok ok SER ok ok ok ok ok SER ok ok SER SER SI",
		"serializable":    "ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok",
	},
	"mariadb": {
		"read-uncommitted":         "ok RC RC RC RC SI RA SI SI SER RA ok SER SER SI",
		"read-committed":           "ok ok RA SER RA SI RA SI SI SER RA RA SER SER SI",
		"repeatable-read":          "ok ok ok SER ok SI ok SI SI SER ok RA SER SER SI",
		"repeatable-read+snapshot": "ok ok ok SER ok ok ok ok ok SER ok ok SER SER ok",
		"serializable":             "ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok",
	},
}

// ExpectedRow returns Expected's entries for kind at level, or nil.
func ExpectedRow(kind, level string) []string {
	row, ok := Expected[kind][level]
	if !ok {
		return nil
	}
	return strings.Fields(row)
}

// Documented is what Hermitage's summary documents per Hermitage column
// for PostgreSQL ("read committed", "repeatable read", "serializable")
// and MySQL/InnoDB (the four levels), in its symbols: "✓" the level
// prevents the anomaly, "—" it does not, "R/O" it prevents it for read-only
// transactions only. Hermitage has no column for MariaDB's
// innodb_snapshot_isolation.
var Documented = map[string]map[string]map[string]string{
	"postgres": {
		"read-committed":  {"G0": "✓", "G1a": "✓", "G1b": "✓", "G1c": "✓", "OTV": "✓", "P4": "—", "G-single": "—", "G2-item": "—", "PMP": "—", "G2": "—"},
		"repeatable-read": {"G0": "✓", "G1a": "✓", "G1b": "✓", "G1c": "✓", "OTV": "✓", "P4": "✓", "G-single": "✓", "G2-item": "—", "PMP": "✓", "G2": "—"},
		"serializable":    {"G0": "✓", "G1a": "✓", "G1b": "✓", "G1c": "✓", "OTV": "✓", "P4": "✓", "G-single": "✓", "G2-item": "✓", "PMP": "✓", "G2": "✓"},
	},
	"mariadb": {
		"read-uncommitted": {"G0": "✓", "G1a": "—", "G1b": "—", "G1c": "—", "OTV": "—", "P4": "—", "G-single": "—", "G2-item": "—", "PMP": "—", "G2": "—"},
		"read-committed":   {"G0": "✓", "G1a": "✓", "G1b": "✓", "G1c": "✓", "OTV": "✓", "P4": "—", "G-single": "—", "G2-item": "—", "PMP": "—", "G2": "—"},
		"repeatable-read":  {"G0": "✓", "G1a": "✓", "G1b": "✓", "G1c": "✓", "OTV": "✓", "P4": "—", "G-single": "R/O", "G2-item": "—", "PMP": "R/O", "G2": "—"},
		"serializable":     {"G0": "✓", "G1a": "✓", "G1b": "✓", "G1c": "✓", "OTV": "✓", "P4": "✓", "G-single": "✓", "G2-item": "✓", "PMP": "✓", "G2": "✓"},
	},
}

// DocumentedOccurs says whether, by Hermitage's documentation, sc's
// anomaly occurs at level of kind (its script shows it), and whether
// Hermitage documents that at all. "R/O" allows the scenarios whose
// anomalous transaction writes (not ReadOnly).
func DocumentedOccurs(kind, level string, sc Scenario) (occurs, documented bool) {
	mark, ok := Documented[kind][level][sc.Column]
	if !ok {
		return false, false
	}
	switch mark {
	case "—":
		return true, true
	case "R/O":
		return !sc.ReadOnly, true
	}
	return false, true
}

// Differences explains every entry where hyperiso's verdict and
// Hermitage's documentation disagree, keyed "kind/level/scenario"
// (docs/hermitage.md says more); the tests fail on a disagreement missing
// here, and on an entry here that did not happen.
var Differences = map[string]string{
	"postgres/repeatable-read/P4-delete": "PostgreSQL detects write conflicts per row version: T2's delete is committed when T1's insert " +
		"goes on, so T1 finds no live row 1, inserts a new one, and overwrites a delete it never saw (hyperiso's scenario; Hermitage's " +
		"P4 updates the row, which repeatable read prevents)",
	"mariadb/read-uncommitted/PMP-write": "T2's first read already sees T1's uncommitted write and insert, and T1 commits, " +
		"so every read of T2 sees T1 whole: the script shows the anomaly only where T2's reads straddle T1's commit " +
		"(Hermitage marks PMP at read uncommitted in its summary, with no script)",
}

// Markdown renders the committed matrix of kind for docs/hermitage.md:
// a row per level, hyperiso's entry (with * where the scenario's anomaly
// occurred) and Hermitage's mark side by side in each cell.
func Markdown(kind string) string {
	var b strings.Builder
	b.WriteString("| level |")
	for _, sc := range Scenarios {
		b.WriteString(" " + sc.Name + " |")
	}
	b.WriteString("\n|---|")
	for range Scenarios {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, level := range levelOrder[kind] {
		row := ExpectedRow(kind, level)
		fmt.Fprintf(&b, "| %s |", level)
		for j, sc := range Scenarios {
			entry := row[j]
			if entryOccurred(entry, sc) {
				entry += "*"
			}
			doc := "n/a"
			if _, ok := Documented[kind][level]; ok {
				doc = Documented[kind][level][sc.Column]
			}
			fmt.Fprintf(&b, " %s / %s |", entry, doc)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// levelOrder lists Expected's levels of each kind, weakest first.
var levelOrder = map[string][]string{
	"postgres": {"read-committed", "repeatable-read", "serializable"},
	"mariadb":  {"read-uncommitted", "read-committed", "repeatable-read", "repeatable-read+snapshot", "serializable"},
}

// entryOccurred reports whether an entry of the matrix shows sc's
// anomaly, as Cell.Occurred does.
func entryOccurred(entry string, sc Scenario) bool {
	for _, l := range Checked {
		if cellName(l) == entry {
			return l <= sc.Level
		}
	}
	return false
}
