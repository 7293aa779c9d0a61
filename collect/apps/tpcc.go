package apps

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/hyperiso/hyperiso/collect/workload"
)

// TPC-C at a small scale: the nine tables and the five transactions of the
// specification (clause 2), with its mix and its input distributions
// simplified (uniform customers and items instead of NURand, a customer's
// last name one of customers/3 numbers). Text columns are left out, money
// is in cents.

var tpccSpec = spec{
	params: []param{
		{"warehouses", 2, "warehouses"},
		{"districts", 4, "districts per warehouse"},
		{"customers", 30, "customers per district, each with an order at first"},
		{"items", 50, "items, each with a stock row per warehouse"},
		{"lines", 10, "most lines of an order, at most 15; an order has 5 to lines"},
	},
	build: buildTPCC,
	writes: func(p map[string]int64) int64 {
		// Delivery: per district a new order, an order, its lines, a
		// customer; new-order: a district, an order (two groups) and a
		// new order, and per line a stock row and the line (two groups).
		return max(p["districts"]*(3+p["lines"]), 4+3*p["lines"], 4)
	},
}

type tpcc struct {
	w, d, c, i, lines int64
	names             int64 // distinct last names per district
	wh, dist, cust    *table
	hist, ord, neword *table
	oline, item, stk  *table
}

func buildTPCC(a *app, p map[string]int64) error {
	t := &tpcc{w: p["warehouses"], d: p["districts"], c: p["customers"], i: p["items"], lines: p["lines"]}
	if t.lines > 15 {
		return fmt.Errorf("--scale: an order has at most 15 lines (lines=%d)", t.lines)
	}
	t.names = max(1, t.c/3)
	orders := t.c + int64(a.cfg.Sessions)*int64(a.cfg.Txns) + 1
	W, D := col{"w_id", t.w}, col{"d_id", t.d}
	t.wh = newTable(1, "wh", []col{W},
		[]group{{"info", []string{"w_tax"}}, {"ytd", []string{"w_ytd"}}})
	t.dist = newTable(2, "dist", []col{{"d_w_id", t.w}, D},
		[]group{{"info", []string{"d_tax"}}, {"next", []string{"d_next_o_id"}}, {"ytd", []string{"d_ytd"}}})
	t.cust = newTable(3, "cust", []col{{"c_w_id", t.w}, {"c_d_id", t.d}, {"c_id", t.c}},
		[]group{{"info", []string{"c_last", "c_credit", "c_discount"}},
			{"bal", []string{"c_balance", "c_ytd_payment", "c_payment_cnt", "c_delivery_cnt"}}},
		[]string{"c_w_id", "c_d_id", "c_last"})
	t.hist = newTable(4, "hist", []col{{"h_session", int64(a.cfg.Sessions)}, {"h_seq", max(1, int64(a.cfg.Txns))}},
		[]group{{"row", []string{"h_c_w_id", "h_c_d_id", "h_c_id", "h_w_id", "h_d_id", "h_amount"}}})
	t.ord = newTable(5, "ord", []col{{"o_w_id", t.w}, {"o_d_id", t.d}, {"o_id", orders}},
		[]group{{"info", []string{"o_c_id", "o_ol_cnt", "o_all_local"}}, {"carrier", []string{"o_carrier_id"}}},
		[]string{"o_w_id", "o_d_id", "o_c_id"})
	t.neword = newTable(6, "neword", []col{{"no_w_id", t.w}, {"no_d_id", t.d}, {"no_o_id", orders}},
		[]group{{"row", nil}})
	t.oline = newTable(7, "oline", []col{{"ol_w_id", t.w}, {"ol_d_id", t.d}, {"ol_o_id", orders}, {"ol_number", t.lines}},
		[]group{{"info", []string{"ol_i_id", "ol_supply_w_id", "ol_quantity", "ol_amount"}}, {"deliv", []string{"ol_delivery_d"}}})
	// One item number more than there are: new-order's unused item.
	t.item = newTable(8, "item", []col{{"i_id", t.i + 1}}, []group{{"info", []string{"i_price"}}})
	t.stk = newTable(9, "stock", []col{{"s_w_id", t.w}, {"s_i_id", t.i}},
		[]group{{"qty", []string{"s_quantity", "s_ytd", "s_order_cnt", "s_remote_cnt"}}})
	a.tables = []*table{t.wh, t.dist, t.cust, t.hist, t.ord, t.neword, t.oline, t.item, t.stk}
	a.types = []txType{
		{"NewOrder", 45, t.newOrder},
		{"Payment", 43, t.payment},
		{"OrderStatus", 4, t.orderStatus},
		{"Delivery", 4, t.delivery},
		{"StockLevel", 4, t.stockLevel},
	}
	a.load = t.load
	return nil
}

// lineCount draws an order's number of lines.
func (t *tpcc) lineCount(rng *rand.Rand) int64 {
	lo := min(5, t.lines)
	return lo + rng.Int64N(t.lines-lo+1)
}

// load: every warehouse, district, customer, item and stock row; each
// district's first customers orders (one per customer, in a random
// order), the first 70% delivered, the rest waiting in new_order.
func (t *tpcc) load(rng *rand.Rand, emit func(tb *table, pk []int64, vals ...int64)) {
	for i := int64(1); i <= t.i; i++ {
		emit(t.item, []int64{i}, 100+rng.Int64N(9901))
	}
	delivered := t.c * 7 / 10
	for w := int64(1); w <= t.w; w++ {
		emit(t.wh, []int64{w}, rng.Int64N(2001), 30_000_000)
		for i := int64(1); i <= t.i; i++ {
			emit(t.stk, []int64{w, i}, 10+rng.Int64N(91), 0, 0, 0)
		}
		for d := int64(1); d <= t.d; d++ {
			emit(t.dist, []int64{w, d}, rng.Int64N(2001), t.c+1, 3_000_000)
			for c := int64(1); c <= t.c; c++ {
				credit := int64(0)
				if rng.IntN(10) == 0 {
					credit = 1 // bad credit
				}
				emit(t.cust, []int64{w, d, c}, (c-1)%t.names, credit, rng.Int64N(5001), -1000, 1000, 1, 0)
			}
			perm := rng.Perm(int(t.c))
			for o := int64(1); o <= t.c; o++ {
				n := t.lineCount(rng)
				carrier, deliv := int64(0), int64(0)
				if o <= delivered {
					carrier, deliv = 1+rng.Int64N(10), 1
				} else {
					emit(t.neword, []int64{w, d, o})
				}
				emit(t.ord, []int64{w, d, o}, int64(perm[o-1])+1, n, 1, carrier)
				for l := int64(1); l <= n; l++ {
					amount := int64(0)
					if o > delivered {
						amount = 1 + rng.Int64N(999_999)
					}
					emit(t.oline, []int64{w, d, o, l}, 1+rng.Int64N(t.i), w, 5, amount, deliv)
				}
			}
		}
	}
}

// newOrder: an order of 5 to lines items, 1% of them from a remote
// warehouse, taken in stock order; 1% of orders name an unused item last
// and roll back.
func (t *tpcc) newOrder(s *session) func(x *txn) error {
	w, d, c := s.pick(t.w), s.pick(t.d), s.pick(t.c)
	n := t.lineCount(s.rng)
	type line struct{ item, supply, qty int64 }
	lines := make([]line, n)
	allLocal := int64(1)
	for k := range lines {
		lines[k] = line{s.pick(t.i), w, s.pick(10)}
		if s.rng.IntN(100) == 0 && t.w > 1 {
			lines[k].supply = s.other(t.w, w)
			allLocal = 0
		}
	}
	// Stock rows are locked in one order, so that new-orders do not
	// deadlock (as TPC-C implementations commonly do).
	slices.SortFunc(lines, func(a, b line) int { return cmp.Or(cmp.Compare(a.supply, b.supply), cmp.Compare(a.item, b.item)) })
	if s.rng.IntN(100) == 0 {
		lines[n-1].item = t.i + 1
	}
	return func(x *txn) error {
		if _, _, err := x.get(t.wh, []int64{w}, "w_tax"); err != nil {
			return err
		}
		old, _, err := x.update(t.dist, []int64{w, d}, []set{{"d_next_o_id", 1, true}}, "d_tax")
		if err != nil {
			return err
		}
		o := old[0]
		if _, _, err := x.get(t.cust, []int64{w, d, c}, "c_discount", "c_last", "c_credit"); err != nil {
			return err
		}
		if err := x.insert(t.ord, []int64{w, d, o}, c, n, allLocal, 0); err != nil {
			return err
		}
		if err := x.insert(t.neword, []int64{w, d, o}); err != nil {
			return err
		}
		for k, l := range lines {
			price, found, err := x.get(t.item, []int64{l.item}, "i_price")
			if err != nil {
				return err
			}
			if !found {
				return workload.ErrRollback
			}
			remote := int64(0)
			if l.supply != w {
				remote = 1
			}
			_, _, err = x.modify(t.stk, []int64{l.supply, l.item}, []string{"s_quantity"}, func(old []int64) ([]set, error) {
				q := old[0] - l.qty
				if old[0] < l.qty+10 {
					q += 91
				}
				return []set{{"s_quantity", q, false}, {"s_ytd", l.qty, true}, {"s_order_cnt", 1, true}, {"s_remote_cnt", remote, true}}, nil
			})
			if err != nil {
				return err
			}
			if err := x.insert(t.oline, []int64{w, d, o, int64(k) + 1}, l.item, l.supply, l.qty, l.qty*price[0], 0); err != nil {
				return err
			}
		}
		return nil
	}
}

// customer draws a payment's or an order-status's customer: 60% by last
// name, else by number.
func (t *tpcc) customer(s *session) (c, last int64, byName bool) {
	if s.rng.IntN(100) < 60 {
		return 0, s.rng.Int64N(t.names), true
	}
	return s.pick(t.c), 0, false
}

// byName finds the customer a by-name selection picks: of those with the
// last name, in key order, the middle one (rounded up), reading the
// columns cols of each; the customer's number and the values of the one
// picked.
func (t *tpcc) byName(x *txn, w, d, last int64, cols ...string) (int64, []int64, error) {
	rows, err := x.scan(t.cust, scan{prefix: []int64{w, d}, where: "c_last", eq: last}, cols...)
	if err != nil || len(rows) == 0 {
		return 0, nil, err
	}
	r := rows[(len(rows)+1)/2-1]
	return r.pk[2], r.vals, nil
}

// payment: a payment to a customer of the district's (85%) or of another
// warehouse's, found by number or by last name.
func (t *tpcc) payment(s *session) func(x *txn) error {
	w, d := s.pick(t.w), s.pick(t.d)
	cw, cd := w, d
	if s.rng.IntN(100) < 15 && t.w > 1 {
		cw, cd = s.other(t.w, w), s.pick(t.d)
	}
	c, last, byName := t.customer(s)
	amount := s.between(100, 500_000)
	seq := s.next("hist")
	return func(x *txn) error {
		if _, _, err := x.update(t.wh, []int64{w}, []set{{"w_ytd", amount, true}}); err != nil {
			return err
		}
		if _, _, err := x.update(t.dist, []int64{w, d}, []set{{"d_ytd", amount, true}}); err != nil {
			return err
		}
		c := c
		if byName {
			var err error
			if c, _, err = t.byName(x, cw, cd, last, "c_balance"); err != nil || c == 0 {
				return err
			}
		}
		if _, _, err := x.update(t.cust, []int64{cw, cd, c},
			[]set{{"c_balance", -amount, true}, {"c_ytd_payment", amount, true}, {"c_payment_cnt", 1, true}}, "c_credit"); err != nil {
			return err
		}
		return x.insert(t.hist, []int64{s.number, seq}, cw, cd, c, w, d, amount)
	}
}

// orderStatus: a customer's balance, latest order and its lines.
func (t *tpcc) orderStatus(s *session) func(x *txn) error {
	w, d := s.pick(t.w), s.pick(t.d)
	c, last, byName := t.customer(s)
	return func(x *txn) error {
		c := c
		var err error
		if byName {
			c, _, err = t.byName(x, w, d, last, "c_balance")
		} else {
			_, _, err = x.get(t.cust, []int64{w, d, c}, "c_balance", "c_last")
		}
		if err != nil || c == 0 {
			return err
		}
		orders, err := x.scan(t.ord, scan{prefix: []int64{w, d}, where: "o_c_id", eq: c, desc: true, limit: 1}, "o_carrier_id", "o_ol_cnt")
		if err != nil || len(orders) == 0 {
			return err
		}
		_, err = x.scan(t.oline, scan{prefix: orders[0].pk}, "ol_i_id", "ol_supply_w_id", "ol_quantity", "ol_amount", "ol_delivery_d")
		return err
	}
}

// delivery: in each district of a warehouse, the oldest undelivered order
// is delivered: taken out of new_order, given a carrier, its lines dated,
// its amount added to the customer's balance.
func (t *tpcc) delivery(s *session) func(x *txn) error {
	w, carrier := s.pick(t.w), s.pick(10)
	return func(x *txn) error {
		for d := int64(1); d <= t.d; d++ {
			rows, err := x.scan(t.neword, scan{prefix: []int64{w, d}, limit: 1})
			if err != nil {
				return err
			}
			if len(rows) == 0 {
				continue
			}
			o := rows[0].pk[2]
			if ok, err := x.delete(t.neword, []int64{w, d, o}); err != nil || !ok {
				if err != nil {
					return err
				}
				continue // delivered meanwhile (read committed)
			}
			old, _, err := x.update(t.ord, []int64{w, d, o}, []set{{"o_carrier_id", carrier, false}}, "o_c_id")
			if err != nil {
				return err
			}
			lines, err := x.scan(t.oline, scan{prefix: []int64{w, d, o}}, "ol_amount")
			if err != nil {
				return err
			}
			sum := int64(0)
			for _, l := range lines {
				sum += l.vals[0]
				if _, _, err := x.update(t.oline, l.pk, []set{{"ol_delivery_d", 1, false}}); err != nil {
					return err
				}
			}
			if _, _, err := x.update(t.cust, []int64{w, d, old[1]}, []set{{"c_balance", sum, true}, {"c_delivery_cnt", 1, true}}); err != nil {
				return err
			}
		}
		return nil
	}
}

// stockLevel: how many items of the district's last 20 orders are low in
// stock.
func (t *tpcc) stockLevel(s *session) func(x *txn) error {
	w, d, threshold := s.pick(t.w), s.pick(t.d), s.between(10, 20)
	return func(x *txn) error {
		next, err := x.need(t.dist, []int64{w, d}, "d_next_o_id")
		if err != nil {
			return err
		}
		lines, err := x.scan(t.oline, scan{prefix: []int64{w, d}, lo: max(1, next[0]-20), hi: next[0]}, "ol_i_id")
		if err != nil {
			return err
		}
		seen := map[int64]bool{}
		low := 0
		for _, l := range lines {
			i := l.vals[0]
			if seen[i] {
				continue
			}
			seen[i] = true
			q, _, err := x.get(t.stk, []int64{w, i}, "s_quantity")
			if err != nil {
				return err
			}
			if q != nil && q[0] < threshold {
				low++
			}
		}
		_ = low // what the terminal would display
		return nil
	}
}
