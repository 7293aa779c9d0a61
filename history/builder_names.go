package history

import (
	"slices"
	"strings"
)

// Keys and values read as names (strings, keywords) rather than integers:
// each gets an integer stand-in distinct from every integer of its kind.

// KeyNamed interns a key read as a name (a string, keyword or vector
// rather than an integer). The name is kept in History.KeyNames; the key
// never equals an integer key.
func (b *Builder) KeyNamed(name string) KeyID {
	if k, ok := b.keyByName[name]; ok {
		return k
	}
	k := KeyID(len(b.h.Keys))
	b.h.Keys = append(b.h.Keys, 0)
	// Named keys' values are spread by the key's index instead; a seed
	// shared with an integer key costs probes, never a wrong answer.
	b.growKey(^int64(k))
	b.keyByName[name] = k
	b.namedKeys = append(b.namedKeys, k)
	b.nameKey(k, name)
	return k
}

func (b *Builder) nameKey(k KeyID, name string) {
	for len(b.h.KeyNames) <= int(k) {
		b.h.KeyNames = append(b.h.KeyNames, "")
	}
	b.h.KeyNames[k] = name
}

// ValueNamed interns a value of key k read as a name. The name is kept in
// History.ValueNames; the value never equals an integer value of k.
func (b *Builder) ValueNamed(k KeyID, name string) ValueID {
	b.flush()
	nv := namedValue{k, name}
	if v, ok := b.valByName[nv]; ok {
		return v
	}
	v := b.newValue(k, 0)
	b.valByName[nv] = v
	b.namedVals = append(b.namedVals, Version{k, v})
	b.nameValue(k, v, name)
	return v
}

func (b *Builder) nameValue(k KeyID, v ValueID, name string) {
	for len(b.h.ValueNames) <= int(k) {
		b.h.ValueNames = append(b.h.ValueNames, nil)
	}
	for len(b.h.ValueNames[k]) <= int(v) {
		b.h.ValueNames[k] = append(b.h.ValueNames[k], "")
	}
	b.h.ValueNames[k][v] = name
}

// SetValueName names an integer-interned value: value val of key (how a
// history's stand-ins are copied into another Builder with their names).
func (b *Builder) SetValueName(key, val int64, name string) {
	k := b.KeyID(key)
	v := b.ValueID(k, val)
	b.valByName[namedValue{k, name}] = v
	b.nameValue(k, v, name)
}

// SetKeyName records the symbolic name of key (formats whose keys are not
// integers); names must be set before Finish.
func (b *Builder) SetKeyName(key int64, name string) {
	k := b.KeyID(key)
	if _, ok := b.keyByName[name]; !ok {
		b.keyByName[name] = k
	}
	b.nameKey(k, name)
}

// standIns gives the keys and values read as names their entries in Keys
// and Values: integers above (wrapping around) every integer in use, so
// that no name equals an integer, and never EmptyList.
func (b *Builder) standIns() {
	h := &b.h
	if len(b.namedKeys) > 0 {
		used := make(map[int64]bool, len(h.Keys))
		named := make(map[KeyID]bool, len(b.namedKeys))
		for _, k := range b.namedKeys {
			named[k] = true
		}
		for k, raw := range h.Keys {
			if !named[KeyID(k)] {
				used[raw] = true
			}
		}
		// In name order, so that the order of keys (T⊥'s writes are sorted
		// by key) does not depend on where each name first appeared.
		slices.SortFunc(b.namedKeys, func(x, y KeyID) int { return strings.Compare(h.KeyNames[x], h.KeyNames[y]) })
		next := freshFrom(used)
		for _, k := range b.namedKeys {
			h.Keys[k] = next(used)
		}
	}
	byKey := map[KeyID][]ValueID{}
	var order []KeyID
	for _, nv := range b.namedVals {
		if byKey[nv.Key] == nil {
			order = append(order, nv.Key)
		}
		byKey[nv.Key] = append(byKey[nv.Key], nv.Value)
	}
	for _, k := range order {
		used := map[int64]bool{EmptyList: true}
		named := map[ValueID]bool{}
		for _, v := range byKey[k] {
			named[v] = true
		}
		// Every other value of k was interned from an integer.
		for v, val := range h.Values[k] {
			if !named[ValueID(v)] {
				used[val] = true
			}
		}
		slices.SortFunc(byKey[k], func(x, y ValueID) int { return strings.Compare(h.ValueNames[k][x], h.ValueNames[k][y]) })
		next := freshFrom(used)
		for _, v := range byKey[k] {
			h.Values[k][v] = next(used)
		}
	}
}

// freshFrom returns a generator of integers not in used, starting above
// the largest one used (other than EmptyList) and marking each it returns.
func freshFrom(used map[int64]bool) func(map[int64]bool) int64 {
	start := int64(0)
	for x := range used {
		if x != EmptyList && x >= start {
			start = x + 1
		}
	}
	return func(used map[int64]bool) int64 {
		for used[start] {
			start++ // wraps around: names are far fewer than 2⁶⁴
		}
		used[start] = true
		return start
	}
}
