package check

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
)

// A commit whose answer came late: T3 wrote x = 1 again and committed
// before T4 started, but its completion time is after T4's. T4 read x = 1
// and y = 5 from T2, so at SI it cannot have read T1's x = 1, which T2
// had overwritten: the probe's reader takes the candidate whose version
// was still current when it started (T3), not the latest one completed
// by then (T1), and settles the history.
func TestProbeReadsTheFreshVersion(t *testing.T) {
	h := parseJSONL(t,
		`{"session":1,"id":1,"time":[0,1],"ops":[["w",1,1]]}`,
		`{"session":2,"id":2,"time":[2,3],"ops":[["w",1,2],["w",2,5]]}`,
		`{"session":3,"id":3,"time":[4,10],"ops":[["w",1,1]]}`,
		`{"session":4,"id":4,"time":[6,7],"ops":[["r",1,1],["r",2,5]]}`,
		`{"session":1,"id":5,"time":[11,12],"ops":[["r",1,1]]}`,
		`{"session":2,"id":6,"time":[13,14],"ops":[["r",2,5]]}`)
	for _, l := range []history.Level{history.SI, history.PC, history.PSI} {
		res := checkAt(t, h, l)
		require.Equal(t, Satisfied, res.Verdict, "%v", l)
		require.Equal(t, int64(1), res.Counters["order_probe"], "%v", l)
	}
}
