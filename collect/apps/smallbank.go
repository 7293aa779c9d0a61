package apps

import (
	"math/rand/v2"

	"github.com/hyperiso/hyperiso/collect/workload"
)

// SmallBank (Alomari, Cahill, Fekete, Röhm, ICDE 2008): customers with a
// savings and a checking account, and six transactions, each looking its
// customers up first. Under snapshot isolation WriteCheck and
// TransactSavings on one customer can skew (each reads both balances and
// writes one), so the workload is not serializable there.

var smallbankSpec = spec{
	params: []param{{"accounts", 20, "customers, each with a savings and a checking account"}},
	build:  buildSmallBank,
	writes: func(map[string]int64) int64 { return 3 },
}

type smallbank struct {
	n                          int64
	account, savings, checking *table
}

func buildSmallBank(a *app, p map[string]int64) error {
	b := &smallbank{n: p["accounts"]}
	id := []col{{"custid", b.n}}
	b.account = newTable(1, "account", id, []group{{"name", []string{"name"}}})
	b.savings = newTable(2, "savings", id, []group{{"bal", []string{"bal"}}})
	b.checking = newTable(3, "checking", id, []group{{"bal", []string{"bal"}}})
	a.tables = []*table{b.account, b.savings, b.checking}
	a.types = []txType{
		{"Amalgamate", 15, b.amalgamate},
		{"Balance", 15, b.balance},
		{"DepositChecking", 15, b.depositChecking},
		{"SendPayment", 25, b.sendPayment},
		{"TransactSavings", 15, b.transactSavings},
		{"WriteCheck", 15, b.writeCheck},
	}
	a.load = func(_ *rand.Rand, emit func(t *table, pk []int64, vals ...int64)) {
		for c := int64(1); c <= b.n; c++ {
			emit(b.account, []int64{c}, c)
			emit(b.savings, []int64{c}, 10_000)
			emit(b.checking, []int64{c}, 10_000)
		}
	}
	return nil
}

// lookup reads the customers' account rows, as each transaction does
// with the names it is given.
func (b *smallbank) lookup(x *txn, cs ...int64) error {
	for _, c := range cs {
		if _, _, err := x.get(b.account, []int64{c}, "name"); err != nil {
			return err
		}
	}
	return nil
}

// amalgamate moves all of one customer's money to another's checking.
func (b *smallbank) amalgamate(s *session) func(x *txn) error {
	c1 := s.pick(b.n)
	c2 := s.other(b.n, c1)
	return func(x *txn) error {
		if err := b.lookup(x, c1, c2); err != nil {
			return err
		}
		sv, _, err := x.update(b.savings, []int64{c1}, []set{{"bal", 0, false}})
		if err != nil {
			return err
		}
		ck, _, err := x.update(b.checking, []int64{c1}, []set{{"bal", 0, false}})
		if err != nil {
			return err
		}
		_, _, err = x.update(b.checking, []int64{c2}, []set{{"bal", sv[0] + ck[0], true}})
		return err
	}
}

// balance reads a customer's two balances.
func (b *smallbank) balance(s *session) func(x *txn) error {
	c := s.pick(b.n)
	return func(x *txn) error {
		if err := b.lookup(x, c); err != nil {
			return err
		}
		if _, _, err := x.get(b.savings, []int64{c}, "bal"); err != nil {
			return err
		}
		_, _, err := x.get(b.checking, []int64{c}, "bal")
		return err
	}
}

// depositChecking adds to a checking balance.
func (b *smallbank) depositChecking(s *session) func(x *txn) error {
	c, v := s.pick(b.n), s.pick(100)
	return func(x *txn) error {
		if err := b.lookup(x, c); err != nil {
			return err
		}
		_, _, err := x.update(b.checking, []int64{c}, []set{{"bal", v, true}})
		return err
	}
}

// sendPayment moves money between two checking accounts; it rolls back if
// the payer's balance is short.
func (b *smallbank) sendPayment(s *session) func(x *txn) error {
	c1 := s.pick(b.n)
	c2, v := s.other(b.n, c1), s.pick(100)
	return func(x *txn) error {
		if err := b.lookup(x, c1, c2); err != nil {
			return err
		}
		_, _, err := x.modify(b.checking, []int64{c1}, []string{"bal"}, func(old []int64) ([]set, error) {
			if old[0] < v {
				return nil, workload.ErrRollback
			}
			return []set{{"bal", -v, true}}, nil
		})
		if err != nil {
			return err
		}
		_, _, err = x.update(b.checking, []int64{c2}, []set{{"bal", v, true}})
		return err
	}
}

// transactSavings adds to or takes from a savings balance; it rolls back
// if that would leave it negative.
func (b *smallbank) transactSavings(s *session) func(x *txn) error {
	c, v := s.pick(b.n), s.between(-50, 100)
	return func(x *txn) error {
		if err := b.lookup(x, c); err != nil {
			return err
		}
		_, _, err := x.modify(b.savings, []int64{c}, []string{"bal"}, func(old []int64) ([]set, error) {
			if old[0]+v < 0 {
				return nil, workload.ErrRollback
			}
			return []set{{"bal", v, true}}, nil
		})
		return err
	}
}

// writeCheck cashes a check against a customer's total balance, charging
// one more when the total is short, from the checking account.
func (b *smallbank) writeCheck(s *session) func(x *txn) error {
	c, v := s.pick(b.n), s.pick(100)
	return func(x *txn) error {
		if err := b.lookup(x, c); err != nil {
			return err
		}
		sv, err := x.need(b.savings, []int64{c}, "bal")
		if err != nil {
			return err
		}
		_, _, err = x.modify(b.checking, []int64{c}, []string{"bal"}, func(old []int64) ([]set, error) {
			if sv[0]+old[0] < v {
				return []set{{"bal", -v - 1, true}}, nil
			}
			return []set{{"bal", -v, true}}, nil
		})
		return err
	}
}
