package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/apps"
	"github.com/hyperiso/hyperiso/collect/memstore"
	"github.com/hyperiso/hyperiso/collect/stores"
	"github.com/hyperiso/hyperiso/collect/workload"
)

const collectLong = `Run a workload against a database and record the history it produced, in
hyperiso's JSON Lines format, ready for "hyperiso check".

Databases (--db):
  memory                       the embedded store (default): no server needed
  postgres://user@host:port/db PostgreSQL (any pgx connection string)
  mariadb://user:pw@host:port/db  MariaDB or MySQL (also mysql://)
  etcd                         a 3-member etcd cluster started inside the
                               process (etcd?members=N for another size),
                               data in a temporary directory
                               (hyperiso-etcd-p<pid>-…) removed after
  etcd://host:port,…           an existing etcd cluster
Each SQL run creates its own table (hyperiso_<pid>_<host>_<time>_<random>),
seeds keys 1…keys with 0, and drops it afterwards (--keep-table keeps it,
named hyperiso_kept_<time>_<random>); an etcd run does the same with the
keys under hyperiso/<pid>_<host>_<time>_<random>/. A run first drops the
tables (and removes the etcd data directories) that runs killed on this
host left, whose process is gone; --cleanup lists them all, removes those,
and exits.

Isolation (--isolation): serializable (default), repeatable-read, snapshot,
read-committed, read-uncommitted. PostgreSQL runs snapshot as REPEATABLE
READ and refuses read-uncommitted; MariaDB has no snapshot level; the
memory store treats repeatable-read as snapshot and refuses
read-uncommitted. etcd runs each transaction as one attempt of its
client's STM: serializable, snapshot (SerializableSnapshot),
repeatable-read (RepeatableReads), read-committed (ReadCommitted); a failed
commit guard is an abort; it refuses read-uncommitted.

Mixed levels (--mix, instead of --isolation): LEVEL=WEIGHT,…, e.g.
ser=0.3,si=0.4,rc=0.3; weights are normalised (a bare LEVEL weighs 1).
Each transaction draws its level, reproducibly from --seed, asks the
database for it and records it ("level" in the file; the metadata says
isolation "mixed" and the mix). LEVEL is one of hyperiso's: ser runs at
SERIALIZABLE, rc at READ COMMITTED, and si, psi, pc, cc, ra at the
database's snapshot level (PostgreSQL REPEATABLE READ; the memory store's
and etcd's snapshot; MariaDB has none and refuses them); each is recorded
as named. rr and ru ask for REPEATABLE READ and READ UNCOMMITTED and record
no level, since neither promises one of hyperiso's: check --default-level
says what to hold them to. A level the database cannot run is refused.

Levels by transaction type (--mix-by-type, application workloads only):
TYPE=LEVEL,…, e.g. NewOrder=ser,Payment=si: every transaction of a type
named asks for that level and records it, as a mix does; the other types
run at --isolation. Exclusive with --mix.

Faults (--faults): comma-separated KIND[:TARGET]@AT[+FOR][/EVERY], AT counted
from the start of the workload, e.g.
  restart:leader@2s+1s          etcd: stop the leader cleanly at 2s, restart it 1s later
  kill:2@3s+2s/10s              etcd: stop member 2 abruptly at 3s for 2s, every 10s
  pause:follower@1s+500ms       etcd: cut a follower off from its peers for 500ms
                                (inside etcd: its raft transport pauses)
  partition:leader@2s+3s        etcd: cut the network between the leader and its
                                peers for 3s, both ways (at the peer proxies)
  delay:50ms~20ms@1s+5s         etcd: delay every message between members by
                                50ms plus up to 20ms, for 5s
                                postgres, mariadb: delay what the sessions send
                                and the server answers, each way
  partition@2s+500ms            postgres, mariadb: hold the sessions' traffic
                                with the server for 500ms (nothing lost)
  drop@2s/5s                    postgres, mariadb: reset every session
                                connection; drop@2s+1s also holds new ones 1s
  kill-conns@2s/5s              postgres, mariadb: terminate the sessions' connections
TARGET is leader (default), follower or a member number; for delay it is
DELAY[~JITTER] (default 100ms). FOR defaults to 1s (drop: 0). partition,
delay and drop go through a TCP proxy in the process: the SQL sessions
then connect through it; the embedded etcd members always talk to their
peers through one each. The summary counts the faults injected and the
transactions in doubt (commit sent, answer lost), which are recorded as
unknown, and logs when each fault started and ended, in time order; the
history's metadata holds the schedule ("faults").
--times records each transaction's interval for strict-ser (check --level
strict-ser); a transaction of unknown outcome never completes.

Workloads (--workload) and their defaults:
  general      VeriStrong's generator: 20 sessions × 100 txns × 20 ops,
               50% reads, 5000 keys, 50% of keys with repeated values
               (Zipf θ 0.5 over N = 100 values); presets RH (95% reads),
               BL (50%), WH (30%), HD (BL with θ 1.5)
  blindw-rw    Cobra's: half read-only, half write-only transactions of
               8 operations, 20 sessions × 100 txns, 1000 keys
  append       Jepsen's list-append: 1 to 4 operations, each an append of
               a unique value or (50%) a read of the whole list, 10
               sessions × 100 txns, 10 keys at a time holding lists
               (PostgreSQL BIGINT[], MariaDB text, the memory store's
               own, etcd text read and put back longer, guarded at
               commit: not at read-committed); keys retire for fresh
               ones at about
               32 appends (--max-list, 0 for never)
  rw-register  Jepsen's rw-register: append's twin over registers, 1 to 4
               reads and writes of unique values, 10 sessions × 100 txns,
               10 keys at a time, retired at about 32 writes (--max-list);
               every store, etcd included
  write-skew   read both keys of a pair, write one: 8 sessions × 50 txns,
               2 keys; finds SI-but-not-SER behaviour
  lost-update  read a key, write it: 8 sessions × 50 txns, 2 keys;
               finds RC-but-not-SI behaviour
  predicate    rows 1…keys, absent at first: 4 operations, half of them
               reads of one row or of a key range (SELECT … WHERE k
               BETWEEN lo AND hi), the others inserts (upserts), deletes
               and UPDATEs that move a row to another key; 8 sessions ×
               50 txns, 12 keys; recorded as inserts, deletes and
               predicate reads (every store; etcd gets each key of a
               range through its STM)
Values are unique (session × 10^9 + sequence) except on the keys chosen to
repeat; --unique makes every value unique.

Application workloads (10 sessions × 100 txns): their own tables, created
and loaded by the run, and transactions of real SQL on PostgreSQL and
MariaDB (on the memory store and etcd, the same transactions over keys;
TPC-C's new-orders exceed etcd's 128 operations per transaction). Each row's
columns form groups; each group of each row is a key of the history whose
value, a version column, every write sets to a fresh unique value. Size:
--scale NAME=VALUE,…; transaction types' weights: --txn-mix TYPE=WEIGHT,…
  tpcc       TPC-C's NewOrder 45, Payment 43, OrderStatus 4, Delivery 4,
             StockLevel 4; warehouses=2,districts=4,customers=30,items=50,
             lines=10
  smallbank  Amalgamate 15, Balance 15, DepositChecking 15, SendPayment 25,
             TransactSavings 15, WriteCheck 15; accounts=20
  twitter    Tweet 25, Follow 10, Unfollow 5, Timeline 50, Profile 10;
             users=30,follows=3,tweets=2
  rubis      RegisterUser 5, RegisterItem 5, StoreBid 20, StoreComment 10,
             ViewItem 40, ViewUser 20; users=30,items=30
See docs/apps.md for their tables, keys and SQL.

Memory store bugs (--bug, comma-separated): lost-update, fractured-reads,
aborted-reads, stale-reads.

The summary (committed, aborted, unknown, reasons, throughput) goes to
standard output, or to standard error when the history does. A failed
commit is recorded as aborted when the database refused it (serialization
failure, deadlock) and as unknown otherwise (lost connection, timeout).

The history is written as transactions complete, in the order they
complete, to FILE.incomplete-<pid> beside -o FILE, whose header says
"incomplete":true; lines are written and synced in batches (every 200ms),
and at the end the end line (the counts) is written, the header completed
and the file renamed to FILE. A killed run leaves that file: the history
recorded so far, marked incomplete, without the end line (readers refuse
it; --lenient reads it, with a warning, and a verdict on it says it was
reached without the rest). With -o - the header cannot be completed: the
end line alone shows that the history is whole. A run that cannot
write (a full disk) stops at once, with exit status 2, keeping what it
wrote in that file; a failed run never touches an existing FILE.

On SIGINT or SIGTERM, collect stops: transactions in flight are recorded as
unknown, the history so far is completed and renamed to FILE, and the table
dropped. It stops by itself, with exit status 2, when its table disappears
or when 100 transactions in a row fail with the same error (conflict aborts
aside). Exit status: 0 when the whole history was written; 130 (SIGINT) or
143 (SIGTERM) when interrupted; 2 otherwise (the history recorded so far is
still written if any transaction ran).

Hermitage (--hermitage): Martin Kleppmann's isolation tests (G0, G1a, G1b,
G1c, OTV, P4, G-single and two variants whose reader writes, G2-item, and
over key ranges PMP, PMP-write, G2, G2-two-edges; and hyperiso's P4-delete,
a lost update through a delete and a re-insert) as fixed interleavings of
two or three connections, run against
the server --db names at each of its levels (PostgreSQL: read-committed,
repeatable-read, serializable; MariaDB: read-uncommitted, read-committed,
repeatable-read, repeatable-read+snapshot where the server has
innodb_snapshot_isolation, serializable), each on a table of its own. A
statement that waits on a lock is left waiting while the next runs, as
Hermitage does by hand. Each history is checked at RC, RA, CC, SI and SER
(the predicate scenarios from RA up); the matrix shows the weakest level
violated, and the runs that waited or aborted, and how the verdicts differ
from Hermitage's documentation.
-o DIR writes each history to DIR/<db>-<level>-<scenario>.jsonl; --timeout
bounds each step. Exit status 0 when every run completed, 2 otherwise.
See docs/hermitage.md.`

// collectFlags are the workload parameters; only those given override the
// chosen workload's defaults.
type collectFlags struct {
	sessions, txns, ops int
	reads, dupKeys      float64
	theta, rollback     float64
	keys, valueSpace    int64
	think               time.Duration
	seed                int64
	preset              string
	unique              bool
	maxList             int
	scale, txnMix       string // application workloads
}

func (f *collectFlags) register(c *cobra.Command) {
	fs := c.Flags()
	fs.IntVar(&f.sessions, "sessions", 0, "concurrent client sessions (default: the workload's)")
	fs.IntVar(&f.txns, "txns", 0, "transactions per session (default: the workload's)")
	fs.IntVar(&f.ops, "ops", 0, "operations per transaction (append: at most; lost-update: read-write pairs)")
	fs.Float64Var(&f.reads, "reads", 0, "proportion of reads (append: of list reads; blindw-rw: of read-only transactions)")
	fs.Int64Var(&f.keys, "keys", 0, "number of keys (append: at a time)")
	fs.IntVar(&f.maxList, "max-list", 0, "append: retire keys at about this many appends, for fresh ones (default 32; 0: never)")
	fs.Float64Var(&f.dupKeys, "dup-keys", 0, "proportion of keys whose written values repeat")
	fs.Float64Var(&f.theta, "theta", 0, "Zipf degree of the repeated values (default 0.5)")
	fs.Int64Var(&f.valueSpace, "value-space", 0, "number N of distinct repeated values (default 100)")
	fs.Float64Var(&f.rollback, "rollback-rate", 0, "proportion of transactions the client rolls back")
	fs.DurationVar(&f.think, "think", 0, "pause between the reads and the writes of a bait transaction")
	fs.Int64Var(&f.seed, "seed", 1, "seed of the workload (and of the memory store's schedule)")
	fs.StringVar(&f.preset, "preset", "", "general preset: RH|BL|WH|HD")
	fs.BoolVar(&f.unique, "unique", false, "unique-value mode: every written value is unique (--dup-keys 0)")
	fs.StringVar(&f.scale, "scale", "", "application workloads: their size, NAME=VALUE,… (e.g. tpcc: warehouses=2,districts=4)")
	fs.StringVar(&f.txnMix, "txn-mix", "", "application workloads: weights of the transaction types, TYPE=WEIGHT,… (types not named weigh 0)")
}

// generatedOnly are the flags of the generated workloads (--unique is
// not: an application's values are unique anyway).
var generatedOnly = []string{"ops", "reads", "keys", "max-list", "dup-keys", "theta", "value-space", "rollback-rate", "think", "preset"}

// appWorkload builds the named application workload.
func (f *collectFlags) appWorkload(c *cobra.Command, name string) (*workload.Workload, error) {
	for _, fl := range generatedOnly {
		if c.Flags().Changed(fl) {
			return nil, fmt.Errorf("--%s does not apply to the %s workload (its size is --scale %s)", fl, name, apps.Params(name))
		}
	}
	cfg, err := apps.Defaults(name)
	if err != nil {
		return nil, err
	}
	if c.Flags().Changed("sessions") {
		cfg.Sessions = f.sessions
	}
	if c.Flags().Changed("txns") {
		cfg.Txns = f.txns
	}
	cfg.Seed = f.seed
	return apps.New(name, cfg, f.scale, f.txnMix)
}

// workload builds the named workload from its defaults and the flags given.
func (f *collectFlags) workload(c *cobra.Command, name string) (*workload.Workload, error) {
	if apps.Is(name) {
		return f.appWorkload(c, name)
	}
	for _, fl := range []string{"scale", "txn-mix"} {
		if c.Flags().Changed(fl) {
			return nil, fmt.Errorf("--%s applies to the application workloads only (%s)", fl, strings.Join(apps.Names, ", "))
		}
	}
	cfg, err := workload.Defaults(name)
	if err != nil {
		return nil, fmt.Errorf("unknown workload %q (want one of %s)", name, strings.Join(append(slices.Clone(workload.Names), apps.Names...), ", "))
	}
	if f.preset != "" {
		if name != "general" {
			return nil, fmt.Errorf("--preset applies to the general workload only")
		}
		if err := workload.ApplyPreset(&cfg, f.preset); err != nil {
			return nil, err
		}
	}
	set := func(flag string, apply func()) {
		if c.Flags().Changed(flag) {
			apply()
		}
	}
	set("sessions", func() { cfg.Sessions = f.sessions })
	set("txns", func() { cfg.Txns = f.txns })
	set("ops", func() { cfg.Ops = f.ops })
	set("reads", func() { cfg.Reads = f.reads })
	set("keys", func() { cfg.Keys = f.keys })
	set("dup-keys", func() { cfg.DupKeys = f.dupKeys })
	set("theta", func() { cfg.Theta = f.theta })
	set("value-space", func() { cfg.ValueSpace = f.valueSpace })
	set("rollback-rate", func() { cfg.RollbackRate = f.rollback })
	set("think", func() { cfg.Think = f.think })
	set("max-list", func() {
		if name != "append" && name != "rw-register" {
			err = fmt.Errorf("--max-list applies to the append and rw-register workloads only")
		}
		cfg.MaxList = f.maxList
	})
	if err != nil {
		return nil, err
	}
	cfg.Seed = f.seed
	if f.unique {
		if c.Flags().Changed("dup-keys") && f.dupKeys != 0 {
			return nil, fmt.Errorf("--unique contradicts --dup-keys %g", f.dupKeys)
		}
		cfg.DupKeys = 0
	}
	return workload.New(name, cfg)
}

func newCollect(stdout io.Writer) *cobra.Command {
	var (
		f         collectFlags
		db        string
		isoName   string
		mixSpec   string
		byType    string
		wlName    string
		bugs      string
		out       string
		timeout   time.Duration
		keepTable bool
		quiet     bool
		herm      bool
		scenarios string
		faults    string
		times     bool
		fenceSpec string
		cleanup   bool
		checkSpec string
		stopOnV   bool
	)
	c := &cobra.Command{
		Use:   "collect [--db memory|postgres://…|mariadb://…|etcd|etcd://…] [--isolation LEVEL|--mix SPEC] [--workload NAME] [params] -o FILE\n  hyperiso collect --hermitage --db postgres://…|mariadb://… [--scenario NAMES] [-o DIR]\n  hyperiso collect --cleanup [--db postgres://…|mariadb://…]",
		Short: "Run a workload against a database and record its history",
		Long:  collectLong,
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if herm {
				return runHermitage(c, stdout, db, scenarios, out, timeout)
			}
			if cleanup {
				return runCleanup(c, stdout, db)
			}
			if c.Flags().Changed("scenario") {
				return fail(exitBadInput, "--scenario applies to --hermitage only")
			}
			var mix collect.Mix
			var iso collect.Isolation
			var err error
			if c.Flags().Changed("mix") {
				if c.Flags().Changed("isolation") {
					return fail(exitBadInput, "--mix and --isolation are exclusive: a mix gives each transaction its own level")
				}
				if mix, err = collect.ParseMix(mixSpec); err != nil {
					return fail(exitBadInput, "--mix: %v", err)
				}
			} else if iso, err = collect.ParseIsolation(isoName); err != nil {
				return fail(exitBadInput, "--isolation: %v", err)
			}
			w, err := f.workload(c, wlName)
			if err != nil {
				return fail(exitBadInput, "%v", err)
			}
			var types collect.TypeLevels
			if c.Flags().Changed("mix-by-type") {
				switch {
				case w.App() == nil:
					return fail(exitBadInput, "--mix-by-type applies to the application workloads only (%s)", strings.Join(apps.Names, ", "))
				case c.Flags().Changed("mix"):
					return fail(exitBadInput, "--mix and --mix-by-type are exclusive")
				}
				if types, err = collect.ParseTypeLevels(byType, w.App().Types()); err != nil {
					return fail(exitBadInput, "--mix-by-type: %v", err)
				}
			}
			bug, err := memstore.ParseBugs(bugs)
			if err != nil {
				return fail(exitBadInput, "--bug: %v", err)
			}
			sched, err := collect.ParseFaults(faults)
			if err != nil {
				return fail(exitBadInput, "--faults: %v", err)
			}
			stderr := c.ErrOrStderr()
			var fences collect.Fences
			if fenceSpec != "" {
				if fences, err = collect.ParseFences(fenceSpec); err != nil {
					return fail(exitBadInput, "%v", err)
				}
			}
			if stopOnV && checkSpec == "" {
				return fail(exitBadInput, "--stop-on-violation goes with --check LEVEL")
			}
			// Open the output first: a run is too costly to lose to a
			// typo. The history goes to a temporary file beside -o,
			// renamed to -o only once it is whole.
			summaryW := stdout
			var rec *collect.Recorder
			toFile := out != "" && out != "-"
			if toFile {
				if rec, err = collect.CreateFile(out); err != nil {
					return fail(exitBadInput, "%v", err)
				}
			} else {
				rec = collect.NewRecorder(stdout)
				summaryW = stderr
			}
			closed := false
			defer func() {
				if !closed {
					_ = rec.Close()
				}
			}()
			var live *liveCheck
			if checkSpec != "" {
				// Values are certain to be unique with --unique and in the
				// application workloads: only then can a violation be
				// certain before the run ends (docs/online.md).
				unique := f.unique || w.App() != nil
				if live, err = newLiveCheck(checkSpec, unique, stopOnV, summaryW); err != nil {
					return err
				}
				if stopOnV && !unique {
					fmt.Fprintln(stderr, "hyperiso: warning: --stop-on-violation without --unique: a violation is certain only once the run ends (a later transaction may write a value again)")
				}
				rec.Tee(live.chk)
			}
			ctx, stop := interruptible(c.Context())
			defer stop()
			runCtx, stopRun := context.WithCancel(ctx)
			defer stopRun()
			if live != nil {
				live.start(ctx, stopRun)
			}
			st, err := stores.Open(ctx, db, stores.Options{Seed: f.seed, Bugs: bug})
			if err != nil {
				if sig, ok := interruption(ctx); ok {
					return fail(sig.code(), "interrupted by %s before the run started: nothing written", sig.String())
				}
				return fail(exitBadInput, "%v", err)
			}
			opt := collect.Options{Isolation: iso, Mix: mix, ByType: types, OpTimeout: timeout, KeepTable: keepTable, Source: out, Faults: sched, Times: times, Fences: fences, Sink: rec}
			bar := newBar(stderr, w.Sessions()*w.TxnsPerSession(), quiet)
			if bar != nil {
				opt.Progress = func() { _ = bar.Add(1) }
			}
			_, sum, runErr := collect.Run(runCtx, st, w, opt)
			stoppedOnV := live != nil && live.Stopped()
			if stoppedOnV && errors.Is(runErr, context.Canceled) {
				runErr = nil
			}
			if bar != nil {
				if sum != nil && sum.Transactions == sum.Planned {
					_ = bar.Finish()
				} else {
					_ = bar.Exit() // stopped early: leave the bar where it stopped
				}
				fmt.Fprintln(stderr)
			}
			started := rec.Started()
			closed = true
			closeErr := rec.Close()
			sig, interrupted := interruption(ctx)
			if !started || sum == nil {
				if interrupted {
					return fail(sig.code(), "interrupted by %s before any transaction ran: nothing written; %s", sig.String(), oneLine(runErr))
				}
				return fail(exitBadInput, "%v", runErr)
			}
			var td *collect.TeardownError
			tableNote := ""
			if errors.As(runErr, &td) {
				tableNote = "; the table may remain: " + oneLine(td)
			}
			// The history could not be written: the run stopped as soon
			// as it could not, and -o is untouched.
			var we *collect.WriteError
			if closeErr != nil || errors.As(runErr, &we) {
				if !quiet {
					fmt.Fprint(summaryW, sum)
				}
				if we == nil {
					we = closeErr.(*collect.WriteError)
				} else if closeErr != nil {
					// Close names the file that holds what was written.
					we = closeErr.(*collect.WriteError)
				}
				kept := ""
				if toFile {
					kept = "; " + out + " untouched"
				}
				return fail(exitBadInput, "%s: recorded %d of %d planned transactions%s%s", oneLine(we), sum.Transactions, sum.Planned, kept, tableNote)
			}
			if !quiet {
				fmt.Fprint(summaryW, sum)
				if toFile {
					fmt.Fprintf(summaryW, "wrote %s (%d bytes)\n", out, rec.Bytes())
				}
				if keepTable {
					if t, ok := st.(interface{ Table() string }); ok {
						fmt.Fprintf(summaryW, "kept table %s\n", t.Table())
					}
				}
			}
			violated := false
			if live != nil {
				var err error
				if violated, err = live.finish(ctx, out, toFile); err != nil {
					return fail(exitBadInput, "%v", err)
				}
			}
			// One line: what stopped the run, what was written, and
			// whether the table is left.
			if !interrupted && runErr == nil {
				switch {
				case stoppedOnV:
					return fail(exitViolated, "stopped on a violation: wrote %d of %d planned transactions%s", sum.Transactions, sum.Planned, tableNote)
				case violated:
					return fail(exitViolated, "the history violates a level --check asked")
				}
				return nil
			}
			dest := "to standard output"
			if toFile {
				dest = "to " + out
			}
			wrote := fmt.Sprintf("wrote %d of %d planned transactions (%d unknown) %s", sum.Transactions, sum.Planned, sum.Unknown, dest)
			if interrupted {
				return fail(sig.code(), "interrupted by %s: %s%s", sig.String(), wrote, tableNote)
			}
			if cause := withoutTeardown(runErr); cause != nil {
				return fail(exitBadInput, "%s: %s%s", oneLine(cause), wrote, tableNote)
			}
			return fail(exitBadInput, "%s%s", wrote, tableNote)
		},
	}
	f.register(c)
	c.Flags().StringVar(&db, "db", "memory", "database: memory, postgres://…, mariadb://…, etcd or etcd://host:port,…")
	c.Flags().StringVar(&isoName, "isolation", collect.Serializable.String(), "isolation level: "+strings.Join(collect.IsolationNames, "|"))
	c.Flags().StringVar(&mixSpec, "mix", "", "a level per transaction, drawn with --seed: LEVEL=WEIGHT,… (e.g. ser=0.3,si=0.4,rc=0.3; levels "+strings.Join(collect.MixLevelNames, ", ")+")")
	c.Flags().StringVar(&byType, "mix-by-type", "", "application workloads: a level per transaction type, TYPE=LEVEL,… (e.g. NewOrder=ser,Payment=si); other types run at --isolation")
	c.Flags().StringVar(&wlName, "workload", "general", "workload: "+strings.Join(append(slices.Clone(workload.Names), apps.Names...), "|"))
	c.Flags().StringVar(&bugs, "bug", "", "memory store bugs to inject: "+strings.Join(memstore.BugNames(), ","))
	c.Flags().StringVarP(&out, "output", "o", "-", "history file (- for standard output)")
	c.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "bound on each operation; a commit that exceeds it is unknown")
	c.Flags().BoolVar(&keepTable, "keep-table", false, "keep the run's table instead of dropping it")
	c.Flags().BoolVarP(&quiet, "quiet", "q", false, "print neither progress nor summary")
	c.Flags().BoolVar(&herm, "hermitage", false, "run Hermitage's scenarios at every level of --db and print the verdict matrix (-o DIR keeps the histories)")
	c.Flags().StringVar(&scenarios, "scenario", "", "with --hermitage: only these scenarios (comma-separated, e.g. P4,G2-item)")
	c.Flags().StringVar(&faults, "faults", "", "fault schedule, KIND[:TARGET]@AT[+FOR][/EVERY],… (kinds: "+strings.Join(collect.FaultKinds, ", ")+")")
	c.Flags().BoolVar(&cleanup, "cleanup", false, "list what killed runs left (tables in --db, etcd data directories) and remove what belonged to processes that are gone, then exit")
	c.Flags().StringVar(&checkSpec, "check", "", "check the history at these levels (L[,L...]) while the run goes on; the summary ends with the verdicts, exit status 1 if one is violated (docs/online.md)")
	c.Flags().BoolVar(&stopOnV, "stop-on-violation", false, "with --check: end the run once a violation is certain (needs --unique, or an application workload, to be certain before the end)")
	c.Flags().BoolVar(&times, "times", false, "record each transaction's real-time interval (for strict-ser)")
	c.Flags().StringVar(&fenceSpec, "fence-every", "", "fence rounds every DURATION (1s) or every N transactions of a session, on key 0, so that a checker following the history can fold it (docs/online.md)")
	return c
}

// runCleanup lists the leftovers of killed runs, one a line, and removes
// those whose process is gone.
func runCleanup(c *cobra.Command, stdout io.Writer, db string) error {
	ctx, stop := interruptible(c.Context())
	defer stop()
	left, err := stores.Sweep(ctx, db, true)
	for _, l := range left {
		fmt.Fprintln(stdout, l)
	}
	if err != nil {
		return fail(exitBadInput, "cleanup: %v", err)
	}
	if len(left) == 0 {
		fmt.Fprintln(stdout, "nothing left by killed runs")
	}
	return nil
}

// newBar returns a progress bar on a terminal, nil elsewhere.
func newBar(w io.Writer, total int, quiet bool) *progressbar.ProgressBar {
	f, ok := w.(*os.File)
	if quiet || !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return progressbar.NewOptions(total,
		progressbar.OptionSetWriter(f),
		progressbar.OptionSetDescription("collecting"),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("txn"),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionFullWidth(),
	)
}

// signalName is an interrupting signal, as the user knows it.
type signalName struct{ sig syscall.Signal }

func (s signalName) String() string {
	switch s.sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.sig.String()
}

func (s signalName) Error() string { return "interrupted by " + s.String() }

// code is the shell's status for a process the signal ended: 128 + its number.
func (s signalName) code() int { return 128 + int(s.sig) }

// interruptible returns a context cancelled, with a signalName as its cause,
// by the first SIGINT or SIGTERM. Later ones are ignored until stop: the run
// is then finishing, bounded by its timeouts, and writing what it recorded.
func interruptible(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		select {
		case s := <-ch:
			sig, _ := s.(syscall.Signal)
			cancel(signalName{sig})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(nil)
	}
}

// interruption reports the signal that cancelled ctx, if one did.
func interruption(ctx context.Context) (signalName, bool) {
	var s signalName
	ok := errors.As(context.Cause(ctx), &s)
	return s, ok
}

// withoutTeardown drops the teardown failure from a run's error, which the
// message reports apart.
func withoutTeardown(err error) error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		var td *collect.TeardownError
		if errors.As(err, &td) {
			return nil
		}
		return err
	}
	var keep []error
	for _, e := range j.Unwrap() {
		if e = withoutTeardown(e); e != nil {
			keep = append(keep, e)
		}
	}
	return errors.Join(keep...)
}

// oneLine joins the lines of an error's message.
func oneLine(err error) string {
	if err == nil {
		return ""
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}
