package collect

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"regexp"
	"strconv"
)

// Sweeper is a store that finds what killed runs left behind (tables,
// data directories) and removes it. Run sweeps before Setup.
type Sweeper interface {
	// Sweep lists the leftovers of runs it recognises and, if remove,
	// removes those whose process is gone.
	Sweep(ctx context.Context, remove bool) ([]Leftover, error)
}

// Keeper is a store that names its table for keeping before Setup (Run
// calls KeepTable when Options.KeepTable is set), so that no sweep takes
// a kept table.
type Keeper interface {
	KeepTable()
}

// Leftover is a table or a directory a run made and did not remove.
type Leftover struct {
	// What is "table" or "directory".
	What, Name string
	// PID is the process that made it (0 if its name does not say).
	PID int
	// Orphan says its process is gone: it may be removed.
	Orphan bool
	// Removed says the sweep removed it.
	Removed bool
	// Note says why it is left, or the error removing it.
	Note string
}

func (l Leftover) String() string {
	switch {
	case l.Removed:
		return fmt.Sprintf("removed %s %s (process %d is gone)", l.What, l.Name, l.PID)
	case l.Orphan && l.Note == "":
		return fmt.Sprintf("%s %s: process %d is gone", l.What, l.Name, l.PID)
	}
	return fmt.Sprintf("left %s %s: %s", l.What, l.Name, l.Note)
}

var (
	// A run's name may end with an application table's suffix
	// (SQLStore.AppTable).
	runNameRE = regexp.MustCompile(`^hyperiso_([0-9]+)_([0-9a-f]{8})_[0-9]{8}_[0-9]{6}_[0-9a-f]{8}(?:_[a-z]+)?$`)
	keptRE    = regexp.MustCompile(`^hyperiso_kept_[0-9]{8}_[0-9]{6}_[0-9a-f]{8}(?:_[a-z]+)?$`)
	olderRE   = regexp.MustCompile(`^hyperiso_[0-9]{8}_[0-9]{6}_[0-9a-f]{8}$`)
)

// SweepTables classifies a store's table names (ClassifyTable), leaving
// out current, the running store's own, and with remove drops those of
// runs that are gone.
func SweepTables(names []string, current string, remove bool, drop func(name string) error) []Leftover {
	var left []Leftover
	for _, name := range names {
		l, ok := ClassifyTable(name)
		if !ok || name == current {
			continue
		}
		if l.Orphan && remove {
			if err := drop(name); err != nil {
				l.Note = "dropping it: " + err.Error()
			} else {
				l.Removed = true
			}
		}
		left = append(left, l)
	}
	return left
}

// ClassifyTable says whether name is a run's table (TableName,
// KeptTableName, or the names of older versions) and whether its run is
// gone: made on this host by a process that no longer runs.
func ClassifyTable(name string) (l Leftover, ok bool) {
	l = Leftover{What: "table", Name: name}
	switch m := runNameRE.FindStringSubmatch(name); {
	case m != nil:
		l.PID, _ = strconv.Atoi(m[1])
		switch {
		case m[2] != hostTag():
			l.Note = "made on another host"
		case Alive(l.PID):
			l.Note = fmt.Sprintf("process %d still runs", l.PID)
		default:
			l.Orphan = true
		}
		return l, true
	case keptRE.MatchString(name):
		l.Note = "kept (--keep-table)"
		return l, true
	case olderRE.MatchString(name):
		l.Note = "made by an older hyperiso, which did not record its process: drop it by hand if no run uses it"
		return l, true
	}
	return l, false
}

// ClassifyDir is ClassifyTable for a directory named prefix+"p"+PID+"-…"
// (the embedded etcd cluster's data, in the temporary directory of this
// host).
func ClassifyDir(prefix, name string) (l Leftover, ok bool) {
	l = Leftover{What: "directory", Name: name}
	m := regexp.MustCompile(`^` + regexp.QuoteMeta(prefix) + `p([0-9]+)-[0-9]+$`).FindStringSubmatch(name)
	if m == nil {
		if regexp.MustCompile(`^` + regexp.QuoteMeta(prefix) + `[0-9]+$`).MatchString(name) {
			l.Note = "made by an older hyperiso, which did not record its process: remove it by hand if no run uses it"
			return l, true
		}
		return l, false
	}
	l.PID, _ = strconv.Atoi(m[1])
	if Alive(l.PID) {
		l.Note = fmt.Sprintf("process %d still runs", l.PID)
	} else {
		l.Orphan = true
	}
	return l, true
}

// hostTag is a short hash of the host's name.
func hostTag() string {
	name, _ := os.Hostname()
	h := fnv.New32a()
	h.Write([]byte(name))
	return fmt.Sprintf("%08x", h.Sum32())
}
