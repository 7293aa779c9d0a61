package robust

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/hyperiso/hyperiso/history"
)

// GenOptions parameterise a generated workload.
type GenOptions struct {
	Seed uint64
	// Instances is the number of program instances (0: the benchmark's
	// default, 1,000; YCSB 5,000).
	Instances int
	// Keys is the number of keys (entities) the instances choose among,
	// uniformly (0: 500; YCSB 300).
	Keys int
	// Ops is, for YCSB, the operations per instance (0: 10).
	Ops int
	// ReadRatio is, for YCSB, the chance that an operation reads (0: 0.5).
	ReadRatio float64
}

// Generators names the workload generators, in the order help lists them.
var Generators = []string{"smallbank", "courseware", "tpcc", "ycsb"}

// Generate builds a workload of one of the paper's benchmarks (§7.1):
// SmallBank and Courseware with their five programs in equal shares,
// TPC-C with its default mix (New-Order 45 %, Payment 43 %, Order-Status,
// Delivery and Stock-Level 4 % each), all choosing their parameters
// uniformly among Keys entities; or the YCSB-like scalability workload,
// whose instances each perform Ops reads or writes on uniform keys.
// Instances have no session order and no level. The mix is dealt, not
// drawn: each program gets exactly its share of the instances, in a
// random order, as the paper's reported shares (exact 20 %, 4 %) show.
func Generate(kind string, opt GenOptions) (*Workload, error) {
	r := rand.New(rand.NewPCG(opt.Seed, 0x9e3779b97f4a7c15))
	switch kind {
	case "smallbank":
		return dealt(kind, r, opt, 1000, 500, smallBank)
	case "courseware":
		return dealt(kind, r, opt, 1000, 500, courseware)
	case "tpcc":
		return dealt(kind, r, opt, 1000, 500, tpcc)
	case "ycsb":
		return ycsb(r, opt)
	}
	return nil, fmt.Errorf("unknown generator %q (known: %s)", kind, strings.Join(Generators, ", "))
}

// program is one transactional program of a benchmark: its share of the
// mix (in percent) and how an instance picks its keys.
type program struct {
	name  string
	share int
	keys  func(r *rand.Rand, n int) (reads, writes []string)
}

func dealt(kind string, r *rand.Rand, opt GenOptions, defInstances, defKeys int, progs []program) (*Workload, error) {
	n, keys := orDefault(opt.Instances, defInstances), orDefault(opt.Keys, defKeys)
	if n < 1 || keys < 2 {
		return nil, fmt.Errorf("%s needs at least 1 instance and 2 keys (got %d and %d)", kind, n, keys)
	}
	// Each program's count is its share of n, the rounding remainder going
	// to the programs in order.
	counts := make([]int, len(progs))
	total := 0
	for i, p := range progs {
		counts[i] = n * p.share / 100
		total += counts[i]
	}
	for i := 0; total < n; i = (i + 1) % len(progs) {
		counts[i]++
		total++
	}
	var deck []int
	for i, c := range counts {
		for range c {
			deck = append(deck, i)
		}
	}
	r.Shuffle(len(deck), func(i, j int) { deck[i], deck[j] = deck[j], deck[i] })
	b := newBuilder(fmt.Sprintf("%s (seed %d, %d instances, %d keys)", kind, opt.Seed, n, keys))
	seq := make([]int, len(progs))
	for _, pi := range deck {
		p := progs[pi]
		seq[pi]++
		reads, writes := p.keys(r, keys)
		b.add(fmt.Sprintf("%s_%d", p.name, seq[pi]), p.name, reads, writes, history.LevelNone)
	}
	return b.w, nil
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// SmallBank (Figure 4), at the granularity of the cells whose writes
// matter: Account rows are never written; each customer's savings and
// checking balances are. The keys are the customers.
var smallBank = []program{
	{"Balance", 20, func(r *rand.Rand, n int) ([]string, []string) {
		c := r.IntN(n)
		return []string{acc(c), sav(c), chk(c)}, nil
	}},
	{"DepositChecking", 20, func(r *rand.Rand, n int) ([]string, []string) {
		c := r.IntN(n)
		return []string{acc(c), chk(c)}, []string{chk(c)}
	}},
	{"TransactSavings", 20, func(r *rand.Rand, n int) ([]string, []string) {
		c := r.IntN(n)
		return []string{acc(c), sav(c)}, []string{sav(c)}
	}},
	{"Amalgamate", 20, func(r *rand.Rand, n int) ([]string, []string) {
		c1, c2 := two(r, n)
		return []string{acc(c1), acc(c2), sav(c1), chk(c1), chk(c2)}, []string{sav(c1), chk(c1), chk(c2)}
	}},
	{"WriteCheck", 20, func(r *rand.Rand, n int) ([]string, []string) {
		c := r.IntN(n)
		return []string{acc(c), sav(c), chk(c)}, []string{chk(c)}
	}},
}

func acc(c int) string { return fmt.Sprintf("Account[%d]", c) }
func sav(c int) string { return fmt.Sprintf("Savings[%d].balance", c) }
func chk(c int) string { return fmt.Sprintf("Checking[%d].balance", c) }

// two draws two distinct entities.
func two(r *rand.Rand, n int) (int, int) {
	a := r.IntN(n)
	b := r.IntN(n - 1)
	if b >= a {
		b++
	}
	return a, b
}

// Courseware (students, courses, enrolments), with the access patterns
// the paper's allocation implies (Appendix N): Register checks a
// student's row (one key, read-only), AddCourse writes a course (write
// only), Query reads a student with a course and its enrolments,
// RemoveCourse reads and removes a course, Enroll reads the student, the
// course and its enrolments and adds one. Half the keys are students,
// half courses.
var courseware = []program{
	{"Register", 20, func(r *rand.Rand, n int) ([]string, []string) {
		return []string{student(r.IntN(half(n)))}, nil
	}},
	{"AddCourse", 20, func(r *rand.Rand, n int) ([]string, []string) {
		return nil, []string{course(r.IntN(n - half(n)))}
	}},
	{"Query", 20, func(r *rand.Rand, n int) ([]string, []string) {
		c := r.IntN(n - half(n))
		return []string{student(r.IntN(half(n))), course(c), enrolled(c)}, nil
	}},
	{"RemoveCourse", 20, func(r *rand.Rand, n int) ([]string, []string) {
		c := course(r.IntN(n - half(n)))
		return []string{c}, []string{c}
	}},
	{"Enroll", 20, func(r *rand.Rand, n int) ([]string, []string) {
		c := r.IntN(n - half(n))
		return []string{student(r.IntN(half(n))), course(c), enrolled(c)}, []string{enrolled(c)}
	}},
}

func half(n int) int        { return n / 2 }
func student(s int) string  { return fmt.Sprintf("Student[%d]", s) }
func course(c int) string   { return fmt.Sprintf("Course[%d]", c) }
func enrolled(c int) string { return fmt.Sprintf("Course[%d].enrolled", c) }

// tpccKeys splits n keys among districts (one in 50), stock items (half)
// and customers (the rest), and draws one of each.
func tpccKeys(r *rand.Rand, n int) (d, c, item int) {
	nd := max(n/50, 1)
	ni := max(n/2, 1)
	nc := max(n-nd-ni, 1)
	return r.IntN(nd), r.IntN(nc), r.IntN(ni)
}

func stock(i int) string       { return fmt.Sprintf("Stock[%d]", i) }
func customer(c int) string    { return fmt.Sprintf("Customer[%d].balance", c) }
func newOrders(d int) string   { return fmt.Sprintf("District[%d].new_orders", d) }
func nextOrder(d int) string   { return fmt.Sprintf("District[%d].next_order", d) }
func lastOrder(c int) string   { return fmt.Sprintf("Customer[%d].last_order", c) }
func warehouseYTD() string     { return "Warehouse.ytd" }
func districtYTD(d int) string { return fmt.Sprintf("District[%d].ytd", d) }

// TPC-C, with the access patterns the paper's allocation implies: New-
// Order, Payment and Delivery read only what they also write (next order
// number, stock, year-to-date totals, balances, the new-order queue),
// Order-Status reads several keys, Stock-Level one. The keys are split
// among districts, customers and stock items of one warehouse.
var tpcc = []program{
	{"NewOrder", 45, func(r *rand.Rand, n int) ([]string, []string) {
		d, c, _ := tpccKeys(r, n)
		keys := []string{nextOrder(d), newOrders(d), lastOrder(c)}
		for range 5 + r.IntN(11) {
			_, _, item := tpccKeys(r, n)
			keys = append(keys, stock(item))
		}
		return keys, keys
	}},
	{"Payment", 43, func(r *rand.Rand, n int) ([]string, []string) {
		d, c, _ := tpccKeys(r, n)
		keys := []string{warehouseYTD(), districtYTD(d), customer(c)}
		return keys, keys
	}},
	{"OrderStatus", 4, func(r *rand.Rand, n int) ([]string, []string) {
		_, c, _ := tpccKeys(r, n)
		return []string{customer(c), lastOrder(c)}, nil
	}},
	{"Delivery", 4, func(r *rand.Rand, n int) ([]string, []string) {
		d, c, _ := tpccKeys(r, n)
		keys := []string{newOrders(d), lastOrder(c), customer(c)}
		return keys, keys
	}},
	{"StockLevel", 4, func(r *rand.Rand, n int) ([]string, []string) {
		_, _, item := tpccKeys(r, n)
		return []string{stock(item)}, nil
	}},
}

// ycsb is the paper's scalability generator: each instance performs Ops
// operations, each a read (with probability ReadRatio) or a write of a
// uniformly chosen key. A key read after the instance wrote it is an
// internal read and joins no read set.
func ycsb(r *rand.Rand, opt GenOptions) (*Workload, error) {
	n, keys, ops := orDefault(opt.Instances, 5000), orDefault(opt.Keys, 300), orDefault(opt.Ops, 10)
	ratio := opt.ReadRatio
	if ratio == 0 {
		ratio = 0.5
	}
	if n < 1 || keys < 1 || ops < 1 || ratio < 0 || ratio > 1 {
		return nil, fmt.Errorf("ycsb needs positive instances, keys and operations and a read ratio in [0, 1] (got %d, %d, %d, %g)", n, keys, ops, ratio)
	}
	b := newBuilder(fmt.Sprintf("ycsb (seed %d, %d instances, %d ops, %d keys)", opt.Seed, n, ops, keys))
	names := make([]string, keys)
	for k := range names {
		names[k] = fmt.Sprintf("k%d", k)
	}
	// Keys are interned in order so that KeyID k is key k.
	for _, k := range names {
		b.key(k)
	}
	written := make([]int, keys) // instance+1 that last wrote the key
	for i := range n {
		p := Instance{Name: fmt.Sprintf("txn_%d", i+1), Type: "ycsb", Session: -1, Index: -1}
		for range ops {
			k := r.IntN(keys)
			if r.Float64() < ratio {
				if written[k] != i+1 {
					p.Reads = append(p.Reads, KeyID(k))
				}
			} else {
				p.Writes = append(p.Writes, KeyID(k))
				written[k] = i + 1
			}
		}
		p.Reads, p.Writes = sortedSet(p.Reads), sortedSet(p.Writes)
		b.w.Instances = append(b.w.Instances, p)
	}
	return b.w, nil
}
