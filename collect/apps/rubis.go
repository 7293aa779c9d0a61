package apps

import "math/rand/v2"

// A RUBiS-like auction site after Cobra's (OSDI 2020) benchmark: users
// register, put items up for sale, bid on them and comment on each other;
// others view items with their latest bids and users with their latest
// comments. An item row counts its bids and keeps the highest; a user row
// sums its ratings and counts its comments; bids and comments are
// numbered by those counts.

var rubisSpec = spec{
	params: []param{
		{"users", 30, "users at first"},
		{"items", 30, "items for sale at first"},
	},
	build:  buildRUBiS,
	writes: func(map[string]int64) int64 { return 2 },
}

type rubis struct {
	users, items                 int64
	user, item, bid, comment     *table
	userBound, itemBound, counts int64
}

func buildRUBiS(a *app, p map[string]int64) error {
	r := &rubis{users: p["users"], items: p["items"]}
	all := int64(a.cfg.Sessions) * int64(a.cfg.Txns)
	r.userBound, r.itemBound, r.counts = r.users+all, r.items+all, max(1, all)
	r.user = newTable(1, "user", []col{{"uid", r.userBound}},
		[]group{{"info", []string{"region"}}, {"rating", []string{"rating", "ncomments"}}})
	r.item = newTable(2, "item", []col{{"iid", r.itemBound}},
		[]group{{"info", []string{"seller", "category"}}, {"bids", []string{"nbids", "maxbid"}}})
	r.bid = newTable(3, "bid", []col{{"b_iid", r.itemBound}, {"b_seq", r.counts}},
		[]group{{"row", []string{"b_uid", "amount"}}})
	r.comment = newTable(4, "comment", []col{{"c_to", r.userBound}, {"c_seq", r.counts}},
		[]group{{"row", []string{"c_from", "c_iid", "score"}}})
	a.tables = []*table{r.user, r.item, r.bid, r.comment}
	a.types = []txType{
		{"RegisterUser", 5, r.registerUser},
		{"RegisterItem", 5, r.registerItem},
		{"StoreBid", 20, r.storeBid},
		{"StoreComment", 10, r.storeComment},
		{"ViewItem", 40, r.viewItem},
		{"ViewUser", 20, r.viewUser},
	}
	a.load = func(rng *rand.Rand, emit func(t *table, pk []int64, vals ...int64)) {
		for u := int64(1); u <= r.users; u++ {
			emit(r.user, []int64{u}, rng.Int64N(10), 0, 0)
		}
		for i := int64(1); i <= r.items; i++ {
			emit(r.item, []int64{i}, 1+rng.Int64N(r.users), rng.Int64N(10), 0, 0)
		}
	}
	return nil
}

// fresh returns the session's next number for a new user or item: each
// session has a range of its own after the first ones.
func (r *rubis) fresh(s *session, first int64, what string) int64 {
	return first + int64(s.index)*int64(s.a.cfg.Txns) + s.next(what)
}

// registerUser: a new user joins.
func (r *rubis) registerUser(s *session) func(x *txn) error {
	u, region := r.fresh(s, r.users, "user"), s.rng.Int64N(10)
	return func(x *txn) error { return x.insert(r.user, []int64{u}, region, 0, 0) }
}

// registerItem: a user puts a new item up for sale.
func (r *rubis) registerItem(s *session) func(x *txn) error {
	i, seller, category := r.fresh(s, r.items, "item"), s.pick(r.users), s.rng.Int64N(10)
	return func(x *txn) error {
		if _, err := x.need(r.user, []int64{seller}, "region"); err != nil {
			return err
		}
		return x.insert(r.item, []int64{i}, seller, category, 0, 0)
	}
}

// storeBid: a user bids on an item.
func (r *rubis) storeBid(s *session) func(x *txn) error {
	u, i, amount := s.pick(r.users), s.pick(r.items), s.pick(1000)
	return func(x *txn) error {
		if _, err := x.need(r.user, []int64{u}, "region"); err != nil {
			return err
		}
		old, _, err := x.modify(r.item, []int64{i}, []string{"nbids", "maxbid"}, func(old []int64) ([]set, error) {
			return []set{{"nbids", 1, true}, {"maxbid", max(old[1], amount), false}}, nil
		})
		if err != nil {
			return err
		}
		return x.insert(r.bid, []int64{i, old[0] + 1}, u, amount)
	}
}

// storeComment: a user rates another after an item.
func (r *rubis) storeComment(s *session) func(x *txn) error {
	from := s.pick(r.users)
	to, i, score := s.other(r.users, from), s.pick(r.items), s.between(-5, 5)
	return func(x *txn) error {
		if _, err := x.need(r.user, []int64{from}, "region"); err != nil {
			return err
		}
		old, _, err := x.update(r.user, []int64{to}, []set{{"rating", score, true}, {"ncomments", 1, true}})
		if err != nil {
			return err
		}
		return x.insert(r.comment, []int64{to, old[1] + 1}, from, i, score)
	}
}

// viewItem: an item with its last three bids.
func (r *rubis) viewItem(s *session) func(x *txn) error {
	i := s.pick(r.items)
	return func(x *txn) error {
		vals, err := x.need(r.item, []int64{i}, "seller", "nbids", "maxbid")
		if err != nil || vals[1] == 0 {
			return err
		}
		_, err = x.scan(r.bid, scan{prefix: []int64{i}, lo: max(1, vals[1]-2), hi: vals[1] + 1}, "b_uid", "amount")
		return err
	}
}

// viewUser: a user with its rating and last three comments.
func (r *rubis) viewUser(s *session) func(x *txn) error {
	u := s.pick(r.users)
	return func(x *txn) error {
		vals, err := x.need(r.user, []int64{u}, "region", "rating", "ncomments")
		if err != nil || vals[2] == 0 {
			return err
		}
		_, err = x.scan(r.comment, scan{prefix: []int64{u}, lo: max(1, vals[2]-2), hi: vals[2] + 1}, "c_from", "score")
		return err
	}
}
