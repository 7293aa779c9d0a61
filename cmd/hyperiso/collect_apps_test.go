package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/collect/apps"
)

// TestCollectApps: every application workload runs from the command line
// on the memory store with its defaults scaled down, and its history
// checks at SER; --mix-by-type records each type's level.
func TestCollectApps(t *testing.T) {
	dir := t.TempDir()
	for _, w := range []string{"tpcc", "smallbank", "twitter", "rubis", "rw-register"} {
		h := filepath.Join(dir, w+".jsonl")
		code, out, errs := runWithCollect(t, "collect", "--workload", w, "--sessions", "3", "--txns", "15", "-o", h)
		require.Equal(t, 0, code, errs)
		require.Contains(t, out, "workload "+w+" sessions=3 txns=15 ")
		code, out, errs = runCLI(t, "check", "--level", "ser", h)
		require.Equal(t, exitSatisfied, code, out+errs)
	}
	h := filepath.Join(dir, "bytype.jsonl")
	code, out, errs := runWithCollect(t, "collect", "--workload", "smallbank", "--sessions", "3", "--txns", "20",
		"--scale", "accounts=5", "--txn-mix", "Balance=1,WriteCheck=1", "--isolation", "rc", "--mix-by-type", "writecheck=ser", "-o", h)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "memory at mixed (WriteCheck=ser; other types read-committed), workload smallbank sessions=3 txns=20 accounts=5 mix=Amalgamate:0,Balance:1")
	require.Contains(t, out, "by level: WriteCheck=ser ")
	b, err := os.ReadFile(h)
	require.NoError(t, err)
	require.Contains(t, string(b), `"mix-by-type":"WriteCheck=ser; other types read-committed"`)
	ser := strings.Count(string(b), `"level":"ser"`)
	require.Positive(t, ser, "WriteChecks are ser")
	require.Less(t, ser, strings.Count(string(b), `"ops"`), "Balances record no level")
	require.Equal(t, ser, strings.Count(string(b), `"level"`), "no other level")

	for msg, args := range map[string][]string{
		"--keys does not apply to the tpcc workload (its size is --scale warehouses=2,districts=4,customers=30,items=50,lines=10)": {"--workload", "tpcc", "--keys", "3"},
		"--scale applies to the application workloads only":                                                                        {"--scale", "accounts=3"},
		"--txn-mix applies to the application workloads only":                                                                      {"--workload", "append", "--txn-mix", "a=1"},
		"--mix-by-type applies to the application workloads only":                                                                  {"--mix-by-type", "a=ser"},
		"--mix and --mix-by-type are exclusive":                                                                                    {"--workload", "tpcc", "--mix", "ser", "--mix-by-type", "Payment=si"},
		`--mix-by-type: unknown transaction type "Pay"`:                                                                            {"--workload", "tpcc", "--mix-by-type", "Pay=si"},
		`workload smallbank: --scale: "accounts" is not NAME=VALUE`:                                                                {"--workload", "smallbank", "--scale", "accounts"},
		"workload twitter: --txn-mix: every weight is 0":                                                                           {"--workload", "twitter", "--txn-mix", "Tweet=0"},
		"lost-update, tpcc, smallbank, twitter, rubis)":                                                                            {"--workload", "tpce"},
		"rw-register writes unique values":                                                                                         {"--workload", "rw-register", "--dup-keys", "0.5"},
	} {
		code, _, errs = runWithCollect(t, append([]string{"collect", "-q"}, args...)...)
		require.Equal(t, exitBadInput, code, "%v: %s", args, errs)
		require.Contains(t, errs, msg, args)
	}
}

// TestCollectHelpListsApps: collect --help gives each application's
// parameters with their defaults and names each transaction type.
func TestCollectHelpListsApps(t *testing.T) {
	flat := strings.Join(strings.Fields(collectLong), "")
	for _, name := range apps.Names {
		require.Contains(t, flat, apps.Params(name), name)
		for _, tw := range strings.Split(apps.Types(name), ",") {
			typ, weight, _ := strings.Cut(tw, "=")
			require.Contains(t, flat, typ+weight, name)
		}
	}
}
