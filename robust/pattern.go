package robust

import (
	"fmt"
	"slices"
	"strings"
)

// Key patterns. A key in a workload file may hold parameters in braces,
// `acct[{a}]`; `{{` and `}}` stand for literal braces. An instance binds
// parameters with "args" (or through its program's); a key whose
// parameters are all bound is the concrete key it spells. A parameter left
// unbound stands for any value, so such a key is a pattern: it may equal
// every key it matches, and it equals none for certain.
//
// The analysis stays sound by reading "may" and "must" apart. An edge of
// the static graph needs only that some binding makes two keys equal, so
// an instance accessing a pattern is given, as may-accesses of the same
// kind, every other key the pattern can equal (expand). The conditions
// that exempt a cycle because two instances write a common key (S2, S4,
// A3) need that they do under every binding, so they read only the
// concrete keys an instance names (Instance.mustWrites). The exact search
// assumes concrete sets and declines a workload with patterns.

// keyPattern is a parsed key: literal text around its parameters.
type keyPattern struct {
	// lits has one more element than params: lits[0] params[0] lits[1] …
	lits   []string
	params []string
}

// parsePattern reads a key with `{param}` holes and `{{`, `}}` escapes.
func parsePattern(s string) (keyPattern, error) {
	var p keyPattern
	var lit strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '{' && i+1 < len(s) && s[i+1] == '{', c == '}' && i+1 < len(s) && s[i+1] == '}':
			lit.WriteByte(c)
			i++
		case c == '}':
			return p, fmt.Errorf("key %q: a lone } (write }} for a literal brace)", s)
		case c == '{':
			end := strings.IndexByte(s[i+1:], '}')
			if end < 0 {
				return p, fmt.Errorf("key %q: { without } (write {{ for a literal brace)", s)
			}
			name := s[i+1 : i+1+end]
			if !validParam(name) {
				return p, fmt.Errorf("key %q: parameter name %q is not a letter or _ followed by letters, digits or _", s, name)
			}
			p.lits = append(p.lits, lit.String())
			lit.Reset()
			p.params = append(p.params, name)
			i += end + 1
		default:
			lit.WriteByte(c)
		}
	}
	p.lits = append(p.lits, lit.String())
	return p, nil
}

func validParam(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		letter := c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// bind substitutes the bound parameters; what is left unbound stays a
// hole.
func (p keyPattern) bind(args map[string]string) keyPattern {
	out := keyPattern{lits: []string{p.lits[0]}}
	for i, name := range p.params {
		if v, ok := args[name]; ok {
			out.lits[len(out.lits)-1] += v + p.lits[i+1]
			continue
		}
		out.params = append(out.params, name)
		out.lits = append(out.lits, p.lits[i+1])
	}
	return out
}

// concrete reports whether the key has no holes left.
func (p keyPattern) concrete() bool { return len(p.params) == 0 }

// escapeKey writes a literal key so that parsePattern reads it back.
func escapeKey(s string) string {
	return strings.NewReplacer("{", "{{", "}", "}}").Replace(s)
}

// String is the pattern as a workload file writes it.
func (p keyPattern) String() string {
	var b strings.Builder
	for i, l := range p.lits {
		b.WriteString(escapeKey(l))
		if i < len(p.params) {
			b.WriteString("{" + p.params[i] + "}")
		}
	}
	return b.String()
}

// matches reports whether some values of the holes spell s (each hole
// any string: holes are taken as independent, which can only add
// matches).
func (p keyPattern) matches(s string) bool {
	first, last := p.lits[0], p.lits[len(p.lits)-1]
	if len(s) < len(first)+len(last) || !strings.HasPrefix(s, first) || !strings.HasSuffix(s, last) {
		return false
	}
	mid := s[len(first) : len(s)-len(last)]
	for _, l := range p.lits[1 : len(p.lits)-1] {
		j := strings.Index(mid, l)
		if j < 0 {
			return false
		}
		mid = mid[j+len(l):]
	}
	return true
}

// mayEqual reports whether two patterns with holes can spell one key: a
// necessary condition (the text before the first hole and after the
// last agree), so it errs towards a conflict, which is the sound side.
func (p keyPattern) mayEqual(q keyPattern) bool {
	pf, qf := p.lits[0], q.lits[0]
	pl, ql := p.lits[len(p.lits)-1], q.lits[len(q.lits)-1]
	return (strings.HasPrefix(pf, qf) || strings.HasPrefix(qf, pf)) &&
		(strings.HasSuffix(pl, ql) || strings.HasSuffix(ql, pl))
}

// patternKey interns a pattern with holes as a key of its own.
func (b *builder) patternKey(p keyPattern) KeyID {
	name := p.String()
	if id, ok := b.keyID["\x00"+name]; ok {
		return id
	}
	id := KeyID(len(b.w.Keys))
	b.w.Keys = append(b.w.Keys, name)
	b.keyID["\x00"+name] = id
	if b.w.patterns == nil {
		b.w.patterns = map[KeyID]keyPattern{}
	}
	b.w.patterns[id] = p
	return id
}

// expand gives every instance that accesses a pattern, as may-accesses
// of the same kind, every other key the pattern can equal. Cost: the
// distinct patterns times the keys, plus the accesses added.
func (b *builder) expand() {
	w := b.w
	if len(w.patterns) == 0 {
		return
	}
	may := map[KeyID][]KeyID{}
	for id, p := range w.patterns {
		for k := range w.Keys {
			kid := KeyID(k)
			if kid == id {
				continue
			}
			q, isPat := w.patterns[kid]
			if (isPat && p.mayEqual(q)) || (!isPat && p.matches(w.Keys[k])) {
				may[id] = append(may[id], kid)
			}
		}
	}
	grow := func(set []KeyID) (all, added []KeyID) {
		all = slices.Clone(set)
		for _, k := range set {
			all = append(all, may[k]...)
		}
		all = sortedSet(all)
		for _, k := range all {
			if !containsKey(set, k) {
				added = append(added, k)
			}
		}
		return all, added
	}
	for i := range w.Instances {
		p := &w.Instances[i]
		if !p.Patterned {
			continue
		}
		for _, k := range p.Writes {
			if _, isPat := w.patterns[k]; !isPat {
				p.FixedWrites = append(p.FixedWrites, k)
			}
		}
		p.FixedWrites = slices.Clip(p.FixedWrites)
		p.Reads, p.MayReads = grow(p.Reads)
		p.Writes, p.MayWrites = grow(p.Writes)
	}
}

// Patterned reports whether some instance accesses a key pattern with an
// unbound parameter.
func (w *Workload) Patterned() bool { return len(w.patterns) > 0 }

// mustWrites is the set of keys instance i writes under every binding of
// its parameters.
func (w *Workload) mustWrites(i int32) []KeyID {
	if p := &w.Instances[i]; p.Patterned {
		return p.FixedWrites
	}
	return w.Instances[i].Writes
}

// explicit is a key set without the keys expand added.
func explicit(set, added []KeyID) []KeyID {
	if len(added) == 0 {
		return set
	}
	var out []KeyID
	for _, k := range set {
		if !containsKey(added, k) {
			out = append(out, k)
		}
	}
	return out
}

// keyText is key k as a workload file writes it.
func (w *Workload) keyText(k KeyID) string {
	if p, ok := w.patterns[k]; ok {
		return p.String()
	}
	return escapeKey(w.Keys[k])
}
