// Package robust owns robustness checking and safe isolation-level
// allocation for workloads of program instances (MixIso, §5–6): the
// workload model, its JSON and YAML reader (with key patterns that
// instances bind) and its writer, the workload generators of the paper's
// evaluation, the static dependency graph, the static robustness
// criterion (Theorem 6.16, with session order), the allocation rules
// (Theorem 6.18) and their refinement, and the exact search for
// non-serializable executions (a SAT encoding of a set of instances'
// executions for hyperiso's CDCL(T) solver) that confirms a critical
// cycle or, where the graph's components hold up to ExactMax instances,
// decides robustness outright; a larger component is refuted by
// counterexamples among a few of its instances (local.go) or proved
// robust from its shape (proof.go).
//
// MixIso's graph leaves session order out, yet its SER, like hyperiso's,
// keeps it; the analysis here puts it in (see Check and docs/robustness.md),
// which the differential test against a brute-force oracle showed needed.
//
// A workload names, for each program instance, the keys it reads before
// writing them (its read set) and the keys it writes (its write set); it
// says nothing about values, so one workload stands for every history its
// instances can produce.
package robust

import (
	"fmt"
	"slices"

	"github.com/hyperiso/hyperiso/history"
)

// KeyID indexes Workload.Keys.
type KeyID = int32

// Pos locates an instance in its input file (1-based line and column); a
// zero Line means the instance was not read from a file.
type Pos struct {
	File      string
	Line, Col int
}

func (p Pos) String() string {
	switch {
	case p.Line == 0:
		return p.File
	case p.Col == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// prefix is "pos: ", or "" for an instance that comes from no file.
func (p Pos) prefix() string {
	if s := p.String(); s != "" {
		return s + ": "
	}
	return ""
}

// Instance is one program instance: a transactional program with its
// parameters fixed, so that its read and write sets are known.
type Instance struct {
	Name string
	// Type is the program it instantiates (Balance, WriteCheck, …); reports
	// group instances by it.
	Type string
	// Reads is the read set: keys read before being written, sorted,
	// without duplicates. Reads after a write of the same key are internal
	// and create no dependency.
	Reads []KeyID
	// Writes is the write set, sorted, without duplicates.
	Writes []KeyID
	// Level is the declared level, or LevelNone.
	Level history.Level
	// Session indexes Workload.Sessions, or is -1; Index is the position
	// in that session.
	Session, Index int32
	Pos            Pos
	// Patterned marks an instance that names a key pattern with an
	// unbound parameter (pattern.go): Reads and Writes then hold, besides
	// the keys it names, every key a pattern of it can equal (MayReads,
	// MayWrites), and FixedWrites the concrete keys it writes whatever
	// the binding.
	Patterned                        bool
	MayReads, MayWrites, FixedWrites []KeyID
}

// ReadOnly reports whether the instance writes nothing.
func (p *Instance) ReadOnly() bool { return len(p.Writes) == 0 }

// WriteOnly reports whether the instance writes and reads nothing before.
func (p *Instance) WriteOnly() bool { return len(p.Writes) > 0 && len(p.Reads) == 0 }

// SingleKeyReadOnly reports whether the instance reads one key and writes
// none: such an instance cannot be the middle of a critical cycle.
func (p *Instance) SingleKeyReadOnly() bool { return len(p.Writes) == 0 && len(p.Reads) == 1 }

// Workload is a set of program instances with a session order.
type Workload struct {
	// Source names the input (a file, a history, a generator).
	Source    string
	Keys      []string
	Instances []Instance
	// Sessions lists each session's instances in session order.
	Sessions [][]int32
	// patterns holds the keys that are patterns with unbound parameters.
	patterns map[KeyID]keyPattern
}

// soBefore reports whether a precedes b in session order (transitively).
func (w *Workload) soBefore(a, b int32) bool {
	pa, pb := &w.Instances[a], &w.Instances[b]
	return pa.Session >= 0 && pa.Session == pb.Session && pa.Index < pb.Index
}

// next returns the instance right after i in its session, or -1.
func (w *Workload) next(i int32) int32 {
	p := &w.Instances[i]
	if p.Session < 0 || int(p.Index)+1 >= len(w.Sessions[p.Session]) {
		return -1
	}
	return w.Sessions[p.Session][p.Index+1]
}

// prev returns the instance right before i in its session, or -1.
func (w *Workload) prev(i int32) int32 {
	p := &w.Instances[i]
	if p.Session < 0 || p.Index == 0 {
		return -1
	}
	return w.Sessions[p.Session][p.Index-1]
}

// builder assembles a Workload, interning keys.
type builder struct {
	w     *Workload
	keyID map[string]KeyID
}

func newBuilder(source string) *builder {
	return &builder{w: &Workload{Source: source}, keyID: map[string]KeyID{}}
}

func (b *builder) key(k string) KeyID {
	if id, ok := b.keyID[k]; ok {
		return id
	}
	id := KeyID(len(b.w.Keys))
	b.w.Keys = append(b.w.Keys, k)
	b.keyID[k] = id
	return id
}

// add appends an instance outside any session and returns its index.
func (b *builder) add(name, typ string, reads, writes []string, level history.Level) int32 {
	p := Instance{Name: name, Type: typ, Level: level, Session: -1, Index: -1}
	for _, k := range reads {
		p.Reads = append(p.Reads, b.key(k))
	}
	for _, k := range writes {
		p.Writes = append(p.Writes, b.key(k))
	}
	p.Reads, p.Writes = sortedSet(p.Reads), sortedSet(p.Writes)
	b.w.Instances = append(b.w.Instances, p)
	return int32(len(b.w.Instances) - 1)
}

// session appends a session of the given instances, in order.
func (b *builder) session(ids []int32) {
	s := int32(len(b.w.Sessions))
	for i, id := range ids {
		b.w.Instances[id].Session, b.w.Instances[id].Index = s, int32(i)
	}
	b.w.Sessions = append(b.w.Sessions, ids)
}

func sortedSet(ks []KeyID) []KeyID {
	slices.Sort(ks)
	return slices.Clip(slices.Compact(ks))
}

// Supported reports whether the analysis knows level l: the levels MixIso
// defines robustness for (RA and every level above it); a level stronger
// than SER counts as SER.
func Supported(l history.Level) bool { return l != history.Mixed && l.AtLeast(history.RA) }

// SupportedList names the supported levels, strongest first.
func SupportedList(sep string) string {
	return history.LevelList(sep, func(r history.LevelRow) bool { return Supported(r.Level) })
}

// class is what the analysis needs of a level: the form of critical cycle
// an instance at that level can be the middle of (Theorem 6.16).
type class uint8

const (
	classRA  class = iota // RA, CC: form S1
	classPC               // S3
	classPSI              // S2
	classSI               // S4
	classSER              // none
)

// classOf maps a supported level to its class, from the level table's
// implications, strongest first.
func classOf(l history.Level) class {
	switch {
	case l.AtLeast(history.SER):
		return classSER
	case l.AtLeast(history.SI):
		return classSI
	case l.AtLeast(history.PSI):
		return classPSI
	case l.AtLeast(history.PC):
		return classPC
	}
	return classRA
}

// FromHistory derives a workload from a recorded history: every
// transaction that committed or may have committed becomes an instance
// named T<id>, with the keys (an integer key k named "key k") it read before writing them as read set and
// the keys it wrote or appended to as write set, its declared level, and
// the history's session order. Aborted transactions and transactions
// without operations are left out.
func FromHistory(h *history.History) *Workload {
	b := newBuilder(h.Source)
	for _, s := range h.Sessions {
		var ids []int32
		for _, t := range s.Txns {
			tx := &h.Txns[t]
			if tx.Status == history.Aborted || len(tx.Ops) == 0 {
				continue
			}
			written := map[history.KeyID]bool{}
			var reads, writes []string
			for _, op := range tx.Ops {
				k := h.KeyName(op.Key)
				if k == "" {
					k = fmt.Sprintf("key %d", h.Key(op.Key))
				}
				switch {
				case op.Kind.IsWrite():
					written[op.Key] = true
					writes = append(writes, k)
				case op.Kind.IsRead() && !written[op.Key]:
					reads = append(reads, k)
				}
			}
			id := b.add(fmt.Sprintf("T%d", tx.ID), "", reads, writes, tx.Level)
			b.w.Instances[id].Type = b.w.Instances[id].Name
			b.w.Instances[id].Pos = Pos{File: tx.Pos.File, Line: tx.Pos.Line}
			ids = append(ids, id)
		}
		if len(ids) > 0 {
			b.session(ids)
		}
	}
	return b.w
}
