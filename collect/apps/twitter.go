package apps

import "math/rand/v2"

// A Twitter-like application after Cobra's (OSDI 2020) benchmark: users
// post tweets, follow and unfollow each other, and read timelines (the
// latest tweets of those they follow) and profiles. A user row counts its
// tweets and its followers; a tweet is numbered by its author's count.

var twitterSpec = spec{
	params: []param{
		{"users", 30, "users"},
		{"follows", 3, "users each user follows at first"},
		{"tweets", 2, "tweets each user has at first"},
	},
	build:  buildTwitter,
	writes: func(map[string]int64) int64 { return 2 },
}

type twitter struct {
	users, follows, tweets int64
	user, tweet, follow    *table
}

func buildTwitter(a *app, p map[string]int64) error {
	t := &twitter{users: p["users"], follows: min(p["follows"], p["users"]-1), tweets: p["tweets"]}
	perUser := t.tweets + int64(a.cfg.Sessions)*int64(a.cfg.Txns)
	t.user = newTable(1, "user", []col{{"uid", t.users}},
		[]group{{"info", []string{"name"}}, {"tweets", []string{"ntweets"}}, {"fans", []string{"nfollowers"}}})
	t.tweet = newTable(2, "tweet", []col{{"t_uid", t.users}, {"t_seq", max(1, perUser)}},
		[]group{{"body", []string{"body"}}})
	t.follow = newTable(3, "follow", []col{{"f_src", t.users}, {"f_dst", t.users}},
		[]group{{"row", []string{"since"}}})
	a.tables = []*table{t.user, t.tweet, t.follow}
	a.types = []txType{
		{"Tweet", 25, t.post},
		{"Follow", 10, t.doFollow},
		{"Unfollow", 5, t.unfollow},
		{"Timeline", 50, t.timeline},
		{"Profile", 10, t.profile},
	}
	a.load = t.load
	return nil
}

// load: every user with its first tweets and the users it follows.
func (t *twitter) load(rng *rand.Rand, emit func(tb *table, pk []int64, vals ...int64)) {
	fans := make([]int64, t.users+1)
	for u := int64(1); u <= t.users; u++ {
		n := int64(0)
		for _, i := range rng.Perm(int(t.users)) {
			v := int64(i) + 1
			if n == t.follows {
				break
			}
			if v != u {
				emit(t.follow, []int64{u, v}, 0)
				fans[v]++
				n++
			}
		}
	}
	for u := int64(1); u <= t.users; u++ {
		emit(t.user, []int64{u}, u, t.tweets, fans[u])
		for k := int64(1); k <= t.tweets; k++ {
			emit(t.tweet, []int64{u, k}, rng.Int64N(1_000_000))
		}
	}
}

// lastTweets reads the last n tweets of user u, whose count the caller
// read.
func (t *twitter) lastTweets(x *txn, u, count, n int64) error {
	if count == 0 {
		return nil
	}
	_, err := x.scan(t.tweet, scan{prefix: []int64{u}, lo: max(1, count-n+1), hi: count + 1}, "body")
	return err
}

// post: a user tweets.
func (t *twitter) post(s *session) func(x *txn) error {
	u, body := s.pick(t.users), s.rng.Int64N(1_000_000)
	return func(x *txn) error {
		old, _, err := x.update(t.user, []int64{u}, []set{{"ntweets", 1, true}})
		if err != nil {
			return err
		}
		return x.insert(t.tweet, []int64{u, old[0] + 1}, body)
	}
}

// doFollow: a user follows another, unless it already does.
func (t *twitter) doFollow(s *session) func(x *txn) error {
	u := s.pick(t.users)
	v := s.other(t.users, u)
	since := int64(s.n)
	return func(x *txn) error {
		_, found, err := x.get(t.follow, []int64{u, v}, "since")
		if err != nil || found {
			return err
		}
		if err := x.insert(t.follow, []int64{u, v}, since); err != nil {
			return err
		}
		_, _, err = x.update(t.user, []int64{v}, []set{{"nfollowers", 1, true}})
		return err
	}
}

// unfollow: a user stops following another, if it did.
func (t *twitter) unfollow(s *session) func(x *txn) error {
	u := s.pick(t.users)
	v := s.other(t.users, u)
	return func(x *txn) error {
		ok, err := x.delete(t.follow, []int64{u, v})
		if err != nil || !ok {
			return err
		}
		_, _, err = x.update(t.user, []int64{v}, []set{{"nfollowers", -1, true}})
		return err
	}
}

// timeline: the last two tweets of each of (at most ten of) the users a
// user follows.
func (t *twitter) timeline(s *session) func(x *txn) error {
	u := s.pick(t.users)
	return func(x *txn) error {
		follows, err := x.scan(t.follow, scan{prefix: []int64{u}, limit: 10})
		if err != nil {
			return err
		}
		for _, f := range follows {
			v := f.pk[1]
			n, err := x.need(t.user, []int64{v}, "ntweets")
			if err != nil {
				return err
			}
			if err := t.lastTweets(x, v, n[0], 2); err != nil {
				return err
			}
		}
		return nil
	}
}

// profile: a user's counts and last three tweets.
func (t *twitter) profile(s *session) func(x *txn) error {
	u := s.pick(t.users)
	return func(x *txn) error {
		vals, err := x.need(t.user, []int64{u}, "name", "ntweets", "nfollowers")
		if err != nil {
			return err
		}
		return t.lastTweets(x, u, vals[1], 3)
	}
}
