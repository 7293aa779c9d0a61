package apps_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/apps"
	"github.com/hyperiso/hyperiso/collect/internal/dbtest"
	"github.com/hyperiso/hyperiso/collect/mariadb"
	"github.com/hyperiso/hyperiso/collect/memstore"
	"github.com/hyperiso/hyperiso/collect/postgres"
	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/history"
)

// small builds a small run of the named application.
func small(t testing.TB, name string, sessions, txns int, seed int64, scale, mix string) *workload.Workload {
	t.Helper()
	c, err := apps.Defaults(name)
	require.NoError(t, err)
	c.Sessions, c.Txns, c.Seed = sessions, txns, seed
	w, err := apps.New(name, c, scale, mix)
	require.NoError(t, err)
	return w
}

// smallScale keeps TPC-C quick on the servers.
var smallScale = map[string]string{"tpcc": "warehouses=1,districts=2,customers=10,items=20,lines=6"}

func collectRun(t testing.TB, st collect.Store, w *workload.Workload, opt collect.Options) (*history.History, *collect.Summary) {
	t.Helper()
	h, sum, err := collect.Run(context.Background(), st, w, opt)
	require.NoError(t, err)
	require.Equal(t, sum.Planned, sum.Transactions)
	require.Equal(t, h.Stats().Operations, sum.Operations)
	t.Logf("%s", sum)
	return h, sum
}

func TestMemorySerializable(t *testing.T) {
	for _, name := range apps.Names {
		t.Run(name, func(t *testing.T) {
			for seed := int64(1); seed <= 2; seed++ {
				w := small(t, name, 6, 40, seed, "", "")
				h, sum := collectRun(t, memstore.New(memstore.Options{Seed: seed}), w, collect.Options{Isolation: collect.Serializable})
				require.Positive(t, sum.Committed)
				res := dbtest.Verdict(t, dbtest.RoundTrip(t, h), history.SER)
				require.Equal(t, check.Satisfied, res.Verdict, "%s seed %d: %s", name, seed, dbtest.Describe(res))
			}
		})
	}
}

// TestPostgresSerializable: each application at SERIALIZABLE satisfies
// SER, and its tables are gone after the run.
func TestPostgresSerializable(t *testing.T) {
	url, schema, probe := dbtest.PostgresScratch(t)
	for _, name := range apps.Names {
		t.Run(name, func(t *testing.T) {
			st, err := postgres.Open(context.Background(), url)
			require.NoError(t, err)
			w := small(t, name, 6, 30, 1, smallScale[name], "")
			h, sum := collectRun(t, st, w, collect.Options{Isolation: collect.Serializable})
			require.Positive(t, sum.Committed)
			require.Empty(t, dbtest.PostgresTables(t, probe, schema), "tables dropped")
			res := dbtest.Verdict(t, dbtest.RoundTrip(t, h), history.SER)
			require.Equal(t, check.Satisfied, res.Verdict, "%s: %s", name, dbtest.Describe(res))
		})
	}
}

// TestMariaDBSerializable: as TestPostgresSerializable; a kept run keeps
// every table of its application, under the kept name.
func TestMariaDBSerializable(t *testing.T) {
	url, db, probe := dbtest.MariaDBScratch(t)
	for _, name := range apps.Names {
		t.Run(name, func(t *testing.T) {
			st, err := mariadb.Open(context.Background(), url)
			require.NoError(t, err)
			w := small(t, name, 6, 30, 1, smallScale[name], "")
			keep := name == "twitter"
			h, sum := collectRun(t, st, w, collect.Options{Isolation: collect.Serializable, KeepTable: keep})
			require.Positive(t, sum.Committed)
			tables := dbtest.MariaDBTables(t, probe, db)
			if keep {
				require.Len(t, tables, 3, "user, tweet, follow")
				for _, tb := range tables {
					l, ok := collect.ClassifyTable(tb)
					require.True(t, ok, tb)
					require.Contains(t, l.Note, "kept")
					_, err := probe.Exec("DROP TABLE `" + db + "`.`" + tb + "`")
					require.NoError(t, err)
				}
			} else {
				require.Empty(t, tables, "tables dropped")
			}
			res := dbtest.Verdict(t, dbtest.RoundTrip(t, h), history.SER)
			require.Equal(t, check.Satisfied, res.Verdict, "%s: %s", name, dbtest.Describe(res))
		})
	}
}

// ops lists every transaction's status and operations, in order.
func ops(h *history.History) []string {
	var out []string
	for _, tx := range h.Txns[1:] {
		s := tx.Status.String() + ":"
		for _, op := range tx.Ops {
			s += " " + op.Kind.String() + "(" + formatInt(h.Key(op.Key)) + "," + formatInt(h.Value(op.Key, op.Value)) + ")"
		}
		out = append(out, s)
	}
	return out
}

func formatInt(v int64) string { return strconv.FormatInt(v, 10) }

// TestOneSessionSameEverywhere: one session runs alone, so every store
// must run its transactions alike, and record the same operations, value
// for value: the SQL of PostgreSQL and MariaDB (lookups, locking reads,
// scans with their filters, order and limits, inserts, deletes) and the
// memory store's keys all mean one thing.
func TestOneSessionSameEverywhere(t *testing.T) {
	pg, _, _ := dbtest.PostgresScratch(t)
	my, _, _ := dbtest.MariaDBScratch(t)
	for _, name := range apps.Names {
		t.Run(name, func(t *testing.T) {
			w := small(t, name, 1, 60, 3, smallScale[name], "")
			mem, _ := collectRun(t, memstore.New(memstore.Options{Seed: 3}), w, collect.Options{Isolation: collect.Serializable})
			want := ops(mem)
			for url, open := range map[string]func(context.Context, string) (collect.Store, error){
				pg: func(ctx context.Context, u string) (collect.Store, error) { return postgres.Open(ctx, u) },
				my: func(ctx context.Context, u string) (collect.Store, error) { return mariadb.Open(ctx, u) },
			} {
				st, err := open(context.Background(), url)
				require.NoError(t, err)
				h, _ := collectRun(t, st, small(t, name, 1, 60, 3, smallScale[name], ""), collect.Options{Isolation: collect.Serializable})
				require.Equal(t, want, ops(h), "%s on %s", name, st.Name())
			}
		})
	}
}

// TestPostgresTPCCRepeatableRead runs TPC-C's new-order and payment at
// PostgreSQL's REPEATABLE READ (snapshot isolation): the history must
// satisfy SI; whether it satisfies SER is what docs/apps.md reports (TPC-C
// is known to run serializably under SI, Fekete et al. 2005).
func TestPostgresTPCCRepeatableRead(t *testing.T) {
	url, _, _ := dbtest.PostgresScratch(t)
	for seed := int64(1); seed <= 3; seed++ {
		st, err := postgres.Open(context.Background(), url)
		require.NoError(t, err)
		w := small(t, "tpcc", 8, 40, seed, "warehouses=1,districts=2,customers=10,items=20,lines=6", "NewOrder=45,Payment=43")
		h, _ := collectRun(t, st, w, collect.Options{Isolation: collect.RepeatableRead})
		h = dbtest.RoundTrip(t, h)
		res := dbtest.Verdict(t, h, history.SI)
		require.Equal(t, check.Satisfied, res.Verdict, "seed %d at SI: %s", seed, dbtest.Describe(res))
		ser := dbtest.Verdict(t, h, history.SER)
		t.Logf("seed %d: SI satisfied, SER %s", seed, dbtest.Describe(ser))
	}
}

// TestMemorySnapshotShowsSmallBankSkew: under snapshot isolation a
// WriteCheck can miss a TransactSavings on its customer (it reads the old
// savings) while a Balance sees the savings but not the check: SmallBank's
// read-only anomaly (Fekete, O'Neil, O'Neil 2004). The recorded history
// satisfies SI and, on some seed, not SER.
func TestMemorySnapshotShowsSmallBankSkew(t *testing.T) {
	skew := false
	for seed := int64(1); seed <= 10 && !skew; seed++ {
		w := small(t, "smallbank", 8, 40, seed, "accounts=2", "WriteCheck=1,TransactSavings=1,Balance=1")
		h, _ := collectRun(t, memstore.New(memstore.Options{Seed: seed}), w, collect.Options{Isolation: collect.Snapshot})
		res := dbtest.Verdict(t, h, history.SI)
		require.Equal(t, check.Satisfied, res.Verdict, "seed %d at SI: %s", seed, dbtest.Describe(res))
		skew = dbtest.Verdict(t, h, history.SER).Verdict == check.Violated
	}
	require.True(t, skew, "some seed shows SmallBank's write skew")
}

// TestMemoryLostUpdateFound: the memory store that drops its write
// conflicts loses updates of each application's counters, and the
// recorded history says so at SI.
func TestMemoryLostUpdateFound(t *testing.T) {
	for _, name := range apps.Names {
		found := false
		for seed := int64(1); seed <= 4 && !found; seed++ {
			w := small(t, name, 8, 40, seed, "", "")
			h, _ := collectRun(t, memstore.New(memstore.Options{Seed: seed, Bugs: memstore.LostUpdate}), w, collect.Options{Isolation: collect.Snapshot})
			found = dbtest.Verdict(t, h, history.SI).Verdict == check.Violated
		}
		require.True(t, found, "%s: a lost update shows on some seed", name)
	}
}

// TestWritesBound: every transaction writes at most as many groups as its
// application's bound says, which keeps a session's values unique; and
// parameters beyond what keys and values can number are refused.
func TestWritesBound(t *testing.T) {
	for _, name := range apps.Names {
		w := small(t, name, 4, 60, 5, "", "")
		h, _ := collectRun(t, memstore.New(memstore.Options{Seed: 5}), w, collect.Options{Isolation: collect.Serializable})
		most := 0
		for _, tx := range h.Txns[1:] {
			n := 0
			for _, op := range tx.Ops {
				if op.Kind == history.OpWrite {
					n++
				}
			}
			most = max(most, n)
		}
		require.LessOrEqual(t, int64(most), apps.WritesBound(w), name)
	}
	c, _ := apps.Defaults("tpcc")
	for scale, msg := range map[string]string{
		"lines=16":                             "at most 15 lines",
		"districts=1000000":                    "more than unique values can number",
		"warehouses=1000000,customers=1000000": "more than its keys can number",
		"colour=3":                             "is not NAME=VALUE",
		"items=0":                              "must be an integer in 1…1000000",
	} {
		_, err := apps.New("tpcc", c, scale, "")
		require.ErrorContains(t, err, msg, scale)
	}
	_, err := apps.New("smallbank", c, "", "Balance=0")
	require.ErrorContains(t, err, "every weight is 0")
	_, err = apps.New("smallbank", c, "", "Deposit=1")
	require.ErrorContains(t, err, "Type one of Amalgamate")
	_, err = apps.New("bank", c, "", "")
	require.ErrorContains(t, err, "unknown application workload")
}

// TestLevelsByType: with levels by type, each transaction asks for its
// type's level and records it; the other types run at the run's level and
// record what the store declares for it (none, for these two). The types follow from
// the seed, so the test replans them.
func TestLevelsByType(t *testing.T) {
	pg, _, _ := dbtest.PostgresScratch(t)
	for _, db := range []string{"memory", pg} {
		w := small(t, "tpcc", 4, 25, 7, smallScale["tpcc"], "")
		types, err := collect.ParseTypeLevels("neworder=ser,Payment=si", w.App().Types())
		require.NoError(t, err)
		var st collect.Store = memstore.New(memstore.Options{Seed: 7})
		if db != "memory" {
			if st, err = postgres.Open(context.Background(), db); err != nil {
				t.Fatal(err)
			}
		}
		h, sum := collectRun(t, st, w, collect.Options{Isolation: collect.ReadCommitted, ByType: types})
		require.Equal(t, "mixed", h.Meta["isolation"])
		require.Equal(t, "NewOrder=ser,Payment=si; other types read-committed", h.Meta["mix-by-type"])
		require.Len(t, sum.ByLevel, 2)
		require.Equal(t, "NewOrder=ser", sum.ByLevel[0].Level)
		other := history.LevelNone // neither store declares its levels (collect.Leveler)
		want := map[string]history.Level{"NewOrder": history.SER, "Payment": history.SI}
		n := 0
		for _, s := range h.Sessions {
			gen := w.Session(int(s.ID - 1))
			for _, id := range s.Txns {
				typ := gen.Next().Type
				l, ok := want[typ]
				if !ok {
					l = other
				} else {
					n++
				}
				require.Equal(t, l, h.Txns[id].Level, "%s: T%d, a %s", st.Name(), id, typ)
			}
		}
		require.Equal(t, sum.ByLevel[0].Transactions+sum.ByLevel[1].Transactions, n)
		back := dbtest.RoundTrip(t, h)
		res, err := check.Check(context.Background(), back, history.Mixed, check.Options{DefaultLevel: history.RC})
		require.NoError(t, err)
		require.Equal(t, check.Satisfied, res.Verdict, "%s: %s", st.Name(), dbtest.Describe(res))
	}
}

// TestDocsNameEveryColumn: docs/apps.md names every table (by its suffix),
// group and column of every application.
func TestDocsNameEveryColumn(t *testing.T) {
	b, err := os.ReadFile("../../docs/apps.md")
	require.NoError(t, err)
	doc := string(b)
	for _, name := range apps.Names {
		for table, cols := range apps.Columns(name) {
			require.Contains(t, doc, "`"+table+"`", "%s: table %s", name, table)
			for _, c := range cols {
				if !strings.Contains(doc, "`"+c+"`") && !strings.Contains(doc, c+",") && !strings.Contains(doc, ", "+c+"`") {
					t.Errorf("%s: docs/apps.md does not name %s's column or group %s", name, table, c)
				}
			}
		}
	}
}

// TestMemoryWeakerLevels: at the memory store's snapshot isolation and
// read committed, every application's history satisfies SI and RC: the
// recording (a locking read before each update, scans, deletes) invents
// no anomaly the store did not commit.
func TestMemoryWeakerLevels(t *testing.T) {
	for _, name := range apps.Names {
		for iso, level := range map[collect.Isolation]history.Level{collect.Snapshot: history.SI, collect.ReadCommitted: history.RC} {
			w := small(t, name, 6, 40, 3, "", "")
			h, _ := collectRun(t, memstore.New(memstore.Options{Seed: 3}), w, collect.Options{Isolation: iso})
			res := dbtest.Verdict(t, h, level)
			require.Equal(t, check.Satisfied, res.Verdict, "%s at %s: %s", name, iso, dbtest.Describe(res))
		}
	}
}
