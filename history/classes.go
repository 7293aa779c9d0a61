package history

// The anomaly classes hyperiso reports, as data: the name a report uses,
// the Adya/Elle phenomenon it belongs to, the weakest level that forbids
// it, and what it means in one sentence. Validation, the list-append
// findings, the weak and strong checkers, check and explain all name
// anomalies from this table.

// Names of the classes of cycles and of the weak levels' commit-order
// cycles, as reports spell them. Read-consistency findings and list-append
// findings are named by their kinds (AnomalyKind, ListFindingKind), whose
// names are rows of the table too.
const (
	G0                 = "G0"
	G1a                = "G1a"
	G1b                = "G1b"
	G1c                = "G1c"
	GSingle            = "G-single"
	G2Item             = "G2-item"
	G2                 = "G2"
	Phantom            = "phantom"
	PMP                = "PMP"
	LostUpdate         = "lost-update"
	CommitCycle        = "cycle"
	FracturedRead      = "fractured-read"
	CausalityViolation = "causality-violation"
	Internal           = "internal"
	UnsatisfiableRead  = "unsatisfiable-read"
)

// Class describes one anomaly class.
type Class struct {
	// Name is how reports spell it.
	Name string
	// Adya is the Adya/Elle phenomenon it is an instance of ("G1a",
	// "internal", …), or "" when it has none of its own.
	Adya string
	// Weakest is the weakest level that forbids it on its own: every
	// level at least as strong (Level.AtLeast: RC < RA < CC < PC, PSI < SI
	// < SER < strict-SER; RC < RR < SER) does.
	Weakest Level
	// Summary says in one sentence what it means.
	Summary string
	// Also lists levels that forbid it on their own without being at
	// least as strong as Weakest (the levels form a partial order): RR
	// forbids what SER forbids of item reads.
	Also []Level
}

// ForbiddenAt reports whether level l forbids the class.
func (c Class) ForbiddenAt(l Level) bool {
	if l.AtLeast(c.Weakest) {
		return true
	}
	for _, a := range c.Also {
		if l.AtLeast(a) {
			return true
		}
	}
	return false
}

// rr is the Also of the classes that repeatable read forbids because its
// item reads are serializable.
var rr = []Level{RR}

// Classes is the table, one row per name.
var Classes = []Class{
	{G0, G0, RC, "Write cycle: the versions the transactions installed are ordered in a cycle, so no order of the writes explains the final state.", nil},
	{G1a, G1a, RC, "Aborted read: a committed transaction read a value that only an aborted transaction wrote.", nil},
	{G1b, G1b, RC, "Intermediate read: a transaction read a value that its writer overwrote before committing.", nil},
	{G1c, G1c, RC, "Circular information flow: each transaction of the cycle saw (or overwrote) the effects of the previous one.", nil},
	{GSingle, GSingle, SI, "Read skew: a cycle with exactly one anti-dependency (rw) edge: one transaction missed a write whose consequences it saw.", rr},
	{G2Item, G2Item, SER, "Anti-dependency cycle (write skew and kin): each transaction missed a write of the next one; SI forbids it too unless two rw edges are adjacent.", rr},
	{G2, G2, SER, "Anti-dependency cycle through a predicate (write skew over a range and kin): a cycle with two or more anti-dependencies, at least one from a row a predicate read did not return; repeatable read allows it, serializability does not.", nil},
	{Phantom, "", RA, "Phantom: a predicate read did not return a row whose write the transaction saw elsewhere, in another read of the row or through a transaction it saw (one predicate anti-dependency, pointing backwards); read committed and repeatable read allow it.", nil},
	{PMP, "", RA, "Predicate-many-preceders: two predicate reads of one transaction, over different predicates, saw different sets of preceding transactions (a row one missed, the other returned); read committed and repeatable read allow it.", nil},
	{LostUpdate, LostUpdate, PSI, "Lost update: two transactions read the same version of a key and both overwrote it; the later write silently discarded the other.", rr},
	{CommitCycle, "", RC, "A cycle in the commit order that read committed demands (non-monotonic reads).", nil},
	{FracturedRead, "", RA, "Fractured read: a transaction saw some of another transaction's writes but not all of them.", nil},
	{CausalityViolation, "", CC, "Causality violation: a transaction read a version older than one in its causal past.", nil},
	{"thin-air-read", "", RC, "Thin-air read: a value no transaction wrote.", nil},
	{"aborted-read", G1a, RC, "Aborted read: a committed transaction read a value that only an aborted transaction wrote.", nil},
	{"intermediate-read", G1b, RC, "Intermediate read: a transaction read a value that its writer overwrote before committing.", nil},
	{"future-read", Internal, RC, "Future read: a transaction read a value that it writes only later itself.", nil},
	{"not-own-write", Internal, RC, "A transaction read a key after writing it, but not its own write.", nil},
	{"not-latest-own-write", Internal, RC, "A transaction read its own earlier, overwritten write.", nil},
	{"non-repeatable-read", Internal, RA, "Non-repeatable read: two reads of a key with no write between them disagree (read committed allows it).", rr},
	{Internal, Internal, RC, "Internal inconsistency: a transaction's read disagrees with its own earlier writes or reads.", nil},
	{"incompatible-order", "", RC, "Incompatible order: two reads of a list, neither a prefix of the other, so no single version order explains both.", nil},
	{"duplicate-elements", "", RC, "Duplicate elements: a list holds twice a value that was appended at most once.", nil},
	{"garbage-read", "", RC, "Garbage read: a list element that no transaction appended.", nil},
	{UnsatisfiableRead, "", RC, "A read whose only possible writers cannot have committed.", nil},
}

// ClassOf returns the row of the class named name, and whether there is one.
func ClassOf(name string) (Class, bool) {
	for _, c := range Classes {
		if c.Name == name {
			return c, true
		}
	}
	return Class{}, false
}

// mustClass returns the row of name; the names used in code are all in the
// table (a test checks it).
func mustClass(name string) Class {
	c, ok := ClassOf(name)
	if !ok {
		panic("history: no anomaly class " + name)
	}
	return c
}
