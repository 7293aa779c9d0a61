package robust

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hyperiso/hyperiso/history"
)

// build checks decoded programs and instances, whatever file format they
// came from, and assembles the workload: programs' keys bound by each
// instance's args, patterns expanded, levels parsed, sessions chained.
func build(file string, progs []rawProgram, raw []rawInstance) (*Workload, error) {
	b := newBuilder(file)
	type program struct {
		params        map[string]bool
		reads, writes []keyPattern
		pos           Pos
	}
	programs := map[string]*program{}
	for _, rp := range progs {
		if rp.Name == nil || *rp.Name == "" {
			return nil, &InputError{rp.pos, "program has no name"}
		}
		name := *rp.Name
		if q, dup := programs[name]; dup {
			return nil, &InputError{rp.pos, fmt.Sprintf("program %q is defined twice (first at %s)", name, q.pos)}
		}
		pr := &program{params: map[string]bool{}, pos: rp.pos}
		for _, par := range rp.Params {
			if !validParam(par) {
				return nil, &InputError{rp.field("params"), fmt.Sprintf("program %q: parameter name %q is not a letter or _ followed by letters, digits or _", name, par)}
			}
			pr.params[par] = true
		}
		if len(rp.Reads) == 0 && len(rp.Writes) == 0 {
			return nil, &InputError{rp.pos, fmt.Sprintf("program %q has no keys: it must read or write at least one", name)}
		}
		for _, side := range []struct {
			field string
			keys  []string
			out   *[]keyPattern
		}{{"reads", rp.Reads, &pr.reads}, {"writes", rp.Writes, &pr.writes}} {
			for _, k := range side.keys {
				kp, err := parseKey(k)
				if err != nil {
					return nil, &InputError{rp.field(side.field), fmt.Sprintf("program %q: %v", name, err)}
				}
				for _, par := range kp.params {
					if !pr.params[par] {
						return nil, &InputError{rp.field(side.field), fmt.Sprintf("program %q: key %q uses parameter %q, which \"params\" does not declare", name, k, par)}
					}
				}
				*side.out = append(*side.out, kp)
			}
		}
		programs[name] = pr
	}
	byName := make(map[string]int32, len(raw))
	for i, in := range raw {
		pos := in.pos
		if in.Name == nil || *in.Name == "" {
			return nil, &InputError{pos, fmt.Sprintf("instance %d has no name", i+1)}
		}
		name := *in.Name
		if j, dup := byName[name]; dup {
			return nil, &InputError{pos, fmt.Sprintf("instance %q is named twice (first at %s)", name, b.w.Instances[j].Pos)}
		}
		var reads, writes []keyPattern
		typ := in.Type
		if in.Program != "" {
			pr, ok := programs[in.Program]
			if !ok {
				return nil, &InputError{in.field("program"), fmt.Sprintf("instance %q: no program is named %q", name, in.Program)}
			}
			for _, a := range slices.Sorted(maps.Keys(in.Args)) {
				if !pr.params[a] {
					return nil, &InputError{in.field("args"), fmt.Sprintf("instance %q: program %q has no parameter %q", name, in.Program, a)}
				}
			}
			reads, writes = slices.Clone(pr.reads), slices.Clone(pr.writes)
			if typ == "" {
				typ = in.Program
			}
		}
		for _, side := range []struct {
			field string
			keys  []string
			out   *[]keyPattern
		}{{"reads", in.Reads, &reads}, {"writes", in.Writes, &writes}} {
			for _, k := range side.keys {
				kp, err := parseKey(k)
				if err != nil {
					return nil, &InputError{in.field(side.field), fmt.Sprintf("instance %q: %v", name, err)}
				}
				*side.out = append(*side.out, kp)
			}
		}
		if len(reads) == 0 && len(writes) == 0 {
			return nil, &InputError{pos, fmt.Sprintf("instance %q has no keys: it must read or write at least one", name)}
		}
		if in.Program == "" {
			if a, ok := unusedArg(in.Args, reads, writes); ok {
				return nil, &InputError{in.field("args"), fmt.Sprintf("instance %q: argument %q binds no parameter of its keys", name, a)}
			}
		}
		for _, kp := range append(slices.Clone(reads), writes...) {
			if b := kp.bind(in.Args); b.concrete() && b.lits[0] == "" {
				return nil, &InputError{in.field("args"), fmt.Sprintf("instance %q: key %q is empty with its arguments", name, kp.String())}
			}
		}
		level := history.LevelNone
		if in.Level != "" {
			l, ok := history.ParseLevel(in.Level)
			if !ok || !Supported(l) {
				return nil, &InputError{in.field("level"), fmt.Sprintf("instance %q: unknown level %q (robustness knows %s)", name, in.Level, SupportedList(", "))}
			}
			level = l
		}
		if typ == "" {
			typ = name
		}
		id := b.addPatterns(name, typ, reads, writes, in.Args, level)
		b.w.Instances[id].Pos = pos
		byName[name] = id
	}
	b.expand()
	afterPos := make([]Pos, len(raw))
	for i := range raw {
		afterPos[i] = raw[i].field("after")
	}
	if err := sessions(b, raw, byName, afterPos); err != nil {
		return nil, err
	}
	return b.w, nil
}

// parseKey parses one key of a file, refusing the empty key.
func parseKey(k string) (keyPattern, error) {
	if k == "" {
		return keyPattern{}, fmt.Errorf("an empty key")
	}
	return parsePattern(k)
}

// unusedArg finds an argument that no key's parameter takes.
func unusedArg(args map[string]string, sets ...[]keyPattern) (string, bool) {
	used := map[string]bool{}
	for _, set := range sets {
		for _, kp := range set {
			for _, p := range kp.params {
				used[p] = true
			}
		}
	}
	for _, a := range slices.Sorted(maps.Keys(args)) {
		if !used[a] {
			return a, true
		}
	}
	return "", false
}

// addPatterns binds an instance's keys and adds it: a key left with a
// hole becomes a pattern key, and the instance Patterned.
func (b *builder) addPatterns(name, typ string, reads, writes []keyPattern, args map[string]string, level history.Level) int32 {
	p := Instance{Name: name, Type: typ, Level: level, Session: -1, Index: -1}
	intern := func(kp keyPattern) KeyID {
		kp = kp.bind(args)
		if kp.concrete() {
			return b.key(kp.lits[0])
		}
		p.Patterned = true
		return b.patternKey(kp)
	}
	for _, kp := range reads {
		p.Reads = append(p.Reads, intern(kp))
	}
	for _, kp := range writes {
		p.Writes = append(p.Writes, intern(kp))
	}
	p.Reads, p.Writes = sortedSet(p.Reads), sortedSet(p.Writes)
	b.w.Instances = append(b.w.Instances, p)
	return int32(len(b.w.Instances) - 1)
}

// sessions turns the "after" links into sessions: each instance follows
// at most one, is followed by at most one, and the links form no cycle.
func sessions(b *builder, raw []rawInstance, byName map[string]int32, afterPos []Pos) error {
	n := len(raw)
	prev := make([]int32, n)
	next := make([]int32, n)
	for i := range prev {
		prev[i], next[i] = -1, -1
	}
	ins := b.w.Instances
	for i, in := range raw {
		if in.After == nil {
			continue
		}
		j, ok := byName[*in.After]
		switch {
		case !ok:
			return &InputError{afterPos[i], fmt.Sprintf("instance %q comes after %q, which no instance is named", ins[i].Name, *in.After)}
		case int(j) == i:
			return &InputError{afterPos[i], fmt.Sprintf("cycle in session order: instance %q comes after itself", ins[i].Name)}
		case next[j] >= 0:
			return &InputError{afterPos[i], fmt.Sprintf("session order is not a chain: both %q and %q come right after %q", ins[next[j]].Name, ins[i].Name, ins[j].Name)}
		}
		prev[i], next[j] = j, int32(i)
	}
	done := make([]bool, n)
	for i := range n {
		if prev[i] >= 0 || next[i] < 0 {
			continue
		}
		var ids []int32
		for k := int32(i); k >= 0; k = next[k] {
			ids = append(ids, k)
			done[k] = true
		}
		b.session(ids)
	}
	// Instances linked but never reached from a chain's head lie on a
	// cycle (every one has a predecessor).
	for i := range n {
		if done[i] || (prev[i] < 0 && next[i] < 0) {
			continue
		}
		names := []string{ins[i].Name}
		for k := prev[i]; k != int32(i) && len(names) <= 10; k = prev[k] {
			names = append(names, ins[k].Name)
		}
		return &InputError{afterPos[i], fmt.Sprintf("cycle in session order: %s", strings.Join(append(names, ins[i].Name), " comes after "))}
	}
	return nil
}
