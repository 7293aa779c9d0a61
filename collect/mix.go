package collect

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/hyperiso/hyperiso/history"
)

// Mix assigns each transaction of a run an isolation level at random,
// with fixed weights (Options.Mix): the mixed-level histories of MixIso
// ("On Mixing Database Isolation Levels", §3), recorded from a real store.
type Mix struct {
	// Entries are the levels in the order the spec named them; their
	// weights sum to 1.
	Entries []MixEntry
}

// MixEntry is one level of a mix.
type MixEntry struct {
	// Name is the level's canonical name in the spec: a level of
	// hyperiso's (ser, si, psi, pc, cc, ra, rc), or rr or ru.
	Name string
	// Level is what the history records on the entry's transactions: the
	// hyperiso level the spec named, or LevelNone for rr and ru, SQL
	// levels that promise none of hyperiso's (the checker's default
	// level then decides what they are held to).
	Level history.Level
	// Iso is the level the store is asked for: the weakest that is meant
	// to give Level (Snapshot for si and for the levels SI implies).
	Iso Isolation
	// Weight is the entry's probability.
	Weight float64
}

// MixLevelNames lists the names a mix spec accepts: the levels a
// transaction may declare (history.Levels), then the SQL levels that
// promise none of hyperiso's. "rr" is SQL's REPEATABLE READ here, which
// is no database's PL-2.99 for sure (PostgreSQL's is snapshot
// isolation), so a transaction drawn for it declares no level.
var MixLevelNames = append(history.LevelNames(func(r history.LevelRow) bool {
	return r.Declarable && r.Name != sqlOnly[RepeatableRead] && r.Name != sqlOnly[ReadUncommitted]
}), sqlOnly[RepeatableRead], sqlOnly[ReadUncommitted])

// sqlOnly are the short names of the SQL levels a mix may ask the store
// for without hyperiso checking them as such.
var sqlOnly = map[Isolation]string{RepeatableRead: "rr", ReadUncommitted: "ru"}

// mixLevel resolves one name of a spec.
func mixLevel(name string) (MixEntry, error) {
	n := strings.NewReplacer("_", "-", " ", "-").Replace(strings.ToLower(strings.TrimSpace(name)))
	switch n {
	case sqlOnly[RepeatableRead], RepeatableRead.String():
		return MixEntry{Name: sqlOnly[RepeatableRead], Iso: RepeatableRead}, nil
	case sqlOnly[ReadUncommitted], ReadUncommitted.String():
		return MixEntry{Name: sqlOnly[ReadUncommitted], Iso: ReadUncommitted}, nil
	}
	l, ok := history.ParseLevel(n)
	switch {
	case !ok:
		return MixEntry{}, fmt.Errorf("unknown level %q (want %s)", name, strings.Join(MixLevelNames, ", "))
	case l == history.StrictSER:
		// MixIso's axioms have no real time; a run with Options.Times
		// records what check --level strict-ser needs instead.
		return MixEntry{}, fmt.Errorf("strict-ser is an order over the whole history, not a level of one transaction: mix ser, and record --times to check strict-ser")
	}
	e := MixEntry{Name: l.String(), Level: l, Iso: Snapshot}
	switch l {
	case history.SER:
		e.Iso = Serializable
	case history.RC:
		e.Iso = ReadCommitted
	}
	return e, nil
}

// ParseMix parses a spec "level=weight,…" (e.g. "ser=0.3,si=0.4,rc=0.3"):
// levels as MixLevelNames lists them, each once; weights positive numbers,
// normalised to sum to 1; a level without "=weight" weighs 1.
func ParseMix(spec string) (Mix, error) {
	if strings.TrimSpace(spec) == "" {
		return Mix{}, fmt.Errorf("empty mix: want level=weight,… e.g. ser=0.5,si=0.5")
	}
	var m Mix
	total := 0.0
	for _, part := range strings.Split(spec, ",") {
		name, w, hasW := strings.Cut(part, "=")
		if strings.TrimSpace(name) == "" {
			return Mix{}, fmt.Errorf("mix %q: empty entry (want level=weight)", spec)
		}
		e, err := mixLevel(name)
		if err != nil {
			return Mix{}, fmt.Errorf("mix %q: %w", spec, err)
		}
		e.Weight = 1
		if hasW {
			e.Weight, err = strconv.ParseFloat(strings.TrimSpace(w), 64)
			if err != nil || e.Weight <= 0 || math.IsInf(e.Weight, 0) || math.IsNaN(e.Weight) {
				return Mix{}, fmt.Errorf("mix %q: weight of %s must be a positive number, not %q", spec, e.Name, strings.TrimSpace(w))
			}
		}
		for _, o := range m.Entries {
			if o.Name == e.Name {
				return Mix{}, fmt.Errorf("mix %q: %s named twice", spec, e.Name)
			}
		}
		total += e.Weight
		m.Entries = append(m.Entries, e)
	}
	if math.IsInf(total, 0) {
		return Mix{}, fmt.Errorf("mix %q: weights too large", spec)
	}
	for i := range m.Entries {
		m.Entries[i].Weight /= total
	}
	return m, nil
}

// String is the canonical spec: normalised weights, in the spec's order.
func (m Mix) String() string {
	parts := make([]string, len(m.Entries))
	for i, e := range m.Entries {
		parts[i] = e.Name + "=" + strconv.FormatFloat(e.Weight, 'g', 4, 64)
	}
	return strings.Join(parts, ",")
}

// MixDraw draws the levels of one session's transactions, in order.
type MixDraw struct {
	m   Mix
	rng *rand.Rand
}

// mixStream keeps the level draws apart from the workload's streams,
// which share the seed.
const mixStream = 0x6d69785f6c76 // "mix_lv"

// Session returns the draw of session i (0-based) under seed: the same
// seed, mix and i give the same levels, whatever the store answers, so a
// run's levels follow from its seed alone.
func (m Mix) Session(seed int64, i int) *MixDraw {
	return &MixDraw{m: m, rng: rand.New(rand.NewPCG(uint64(seed)^mixStream, uint64(i)))}
}

// Next returns the index in Entries of the session's next transaction's
// level.
func (d *MixDraw) Next() int {
	u := d.rng.Float64()
	for i, e := range d.m.Entries {
		if u < e.Weight {
			return i
		}
		u -= e.Weight
	}
	return len(d.m.Entries) - 1 // rounding: the weights sum to 1 only nearly
}
