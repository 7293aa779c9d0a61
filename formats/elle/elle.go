// Package elle reads Jepsen / Elle histories (docs/formats.md): the EDN
// history.edn Jepsen writes, elle-cli's JSON rendering of the same
// operations (§5.9), and VeriStrong's preprocessed elle-list-append text
// (§6.1). It pairs each :invoke with its completion on the same :process,
// maps :ok / :fail / :info onto committed / aborted / unknown transactions,
// and reads both Elle transactional workloads: rw-register ([:r k v],
// [:w k v]) and list-append ([:append k v], [:r k [..]]), and the rows of
// Elle's closed-predicate workload (rows.go).
//
// For list-append it keeps the whole list of every read (OpReadList); what
// the lists say (version orders, anomalies visible in the lists alone) is
// derived by the model, History.ListFacts, the same for every format.
//
// The EDN syntax is decoded by olympos.io/encoding/edn; this package only
// walks the top-level forms to keep line numbers for its messages.
package elle

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/hyperiso/hyperiso/history"
)

// Format is the name recorded in History.Format.
const Format = "elle"

// Workload is an Elle transactional workload.
type Workload uint8

const (
	// AutoWorkload detects the workload from the micro-operations: any
	// [:append ..] or list-valued read means list-append, any [:w ..] or
	// integer-valued read means rw-register; a file with neither is read
	// as list-append.
	AutoWorkload Workload = iota
	// ListAppend is Elle's list-append workload.
	ListAppend
	// RWRegister is Elle's rw-register workload.
	RWRegister
)

var workloadNames = [...]string{"auto", "list-append", "rw-register"}

func (w Workload) String() string {
	if int(w) < len(workloadNames) {
		return workloadNames[w]
	}
	return fmt.Sprintf("Workload(%d)", w)
}

// Syntax is the surface syntax of the input.
type Syntax uint8

const (
	// AutoSyntax recognises the syntax from the first bytes: a first form
	// starting with {" (or [{") is JSON, a lone integer on the first line
	// is VeriStrong text, anything else EDN.
	AutoSyntax Syntax = iota
	// EDN is Jepsen's history.edn: operation maps one after another, or
	// all of them in one top-level vector or list.
	EDN
	// JSON is elle-cli's JSON rendering: an array of objects, or one
	// object per line.
	JSON
	// VeriStrong is VeriStrong's elle-list-append text (§6.1).
	VeriStrong
)

var syntaxNames = [...]string{"auto", "edn", "json", "veristrong"}

func (s Syntax) String() string {
	if int(s) < len(syntaxNames) {
		return syntaxNames[s]
	}
	return fmt.Sprintf("Syntax(%d)", s)
}

// Options controls the reader.
type Options struct {
	// Lenient turns the structural errors of §5.7 into warnings where the
	// recovery is obvious: a form that does not decode is skipped up to the
	// next line, a map without :type or with an unknown :type is skipped, a
	// malformed micro-operation is dropped, a completion with no pending
	// invocation is ignored, a second invocation on a busy process leaves
	// the first one uncompleted, an :ok without :value counts as :info.
	Lenient bool
	// Workload forces the workload instead of detecting it.
	Workload Workload
	// Syntax forces the syntax instead of recognising it.
	Syntax Syntax
}

// Read reads the history in the file at path.
func Read(path string, opt Options) (*history.History, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseBytes(data, path, opt)
}

// Parse reads a history from r; name is used in positions and messages.
func Parse(r io.Reader, name string, opt Options) (*history.History, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return parseBytes(data, name, opt)
}

// collectAfter is the input size from which parseBytes collects garbage
// once the history is built.
const collectAfter = 32 << 20

// parseBytes reads the history in data. After a large input it runs the
// garbage collector: the input and the operations decoded from it, live
// until the history was built, are as large as the history, and the heap
// the collector next aims for would otherwise make room for them again
// while the checker starts work (`hyperiso stats` on an 87 MB history:
// 0.43 GB peak without, 0.35 GB with).
func parseBytes(data []byte, name string, opt Options) (*history.History, error) {
	collect := len(data) >= collectAfter
	h, err := parseData(data, name, opt)
	if collect {
		runtime.GC()
	}
	return h, err
}

func parseData(data []byte, name string, opt Options) (*history.History, error) {
	syn := opt.Syntax
	if syn == AutoSyntax {
		syn = DetectSyntax(data)
	}
	p := newParser(name, opt)
	var err error
	switch syn {
	case VeriStrong:
		return parseVeriStrong(data, name, opt)
	case JSON:
		err = p.decodeJSON(data)
	case EDN:
		err = p.decodeEDN(data)
	default:
		return nil, fmt.Errorf("%s: unknown syntax %v", name, syn)
	}
	if err != nil {
		return nil, err
	}
	p.syntax = syn
	return p.build()
}

// DetectSyntax recognises the syntax of an Elle history from its first
// bytes (see AutoSyntax).
func DetectSyntax(data []byte) Syntax {
	i := skipBlank(data, 0)
	if i < len(data) && data[i] == '[' {
		if j := skipBlank(data, i+1); j < len(data) && data[j] == '{' {
			i = j
		}
	}
	if i < len(data) && data[i] == '{' {
		if j := skipBlank(data, i+1); j < len(data) && data[j] == '"' {
			return JSON
		}
		return EDN
	}
	if i < len(data) && data[i] >= '0' && data[i] <= '9' {
		line := data[i:]
		if nl := bytes.IndexByte(line, '\n'); nl >= 0 {
			line = line[:nl]
		}
		if isDigits(bytes.TrimSpace(line)) {
			return VeriStrong
		}
	}
	return EDN
}

func skipBlank(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\r', '\n', ',':
			i++
		default:
			return i
		}
	}
	return i
}

func isDigits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
