package hyperiso_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso"
	"github.com/hyperiso/hyperiso/history"
)

// A lost update recorded from concurrent sessions: SI forbids it, RC
// allows it; a commit whose answer was lost is unknown, not committed.
func TestRecorder(t *testing.T) {
	r := hyperiso.NewRecorder()
	a, b := r.Session(), r.Session()
	ta, tb := a.Begin(), b.Begin()
	ta.Read(1, 0)
	tb.Read(1, 0)
	ta.Write(1, 10)
	tb.Write(1, 20)
	ta.Commit()
	tb.Commit()
	lost := a.Begin()
	lost.Write(2, 5)
	lost.Unknown()
	h := r.History()
	require.Equal(t, 2, h.Stats().Committed)
	require.Equal(t, 1, h.Stats().Unknown)
	res, err := hyperiso.Check(context.Background(), h, "si")
	require.NoError(t, err)
	require.Equal(t, hyperiso.Violated, res.Verdict)
	require.Equal(t, history.LostUpdate, res.Anomalies[0].Type)
	res, err = hyperiso.Check(context.Background(), h, "rc")
	require.NoError(t, err)
	require.Equal(t, hyperiso.Satisfied, res.Verdict)
	_, err = hyperiso.Check(context.Background(), h, "serializable-ish")
	require.Error(t, err)
}

// Many goroutines record at once (run with -race): every transaction is
// in the history, each session's in its order, and real time is kept.
func TestRecorderConcurrent(t *testing.T) {
	r := hyperiso.NewRecorder()
	var wg sync.WaitGroup
	for s := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sess := r.Session()
			for i := range 50 {
				tx := sess.Begin()
				tx.Append(int64(s), int64(i+1))
				tx.Commit()
			}
		}()
	}
	wg.Wait()
	h := r.History()
	require.Len(t, h.Sessions, 8)
	require.Equal(t, 400, h.Stats().Committed)
	for _, l := range []string{"strict-ser", "ser", "rc"} {
		res, err := hyperiso.Check(context.Background(), h, l)
		require.NoError(t, err)
		require.Equal(t, hyperiso.Satisfied, res.Verdict, l)
	}
}

// Example: record what a client saw and check it, as in a go test.
func ExampleRecorder() {
	r := hyperiso.NewRecorder()
	s1, s2 := r.Session(), r.Session()
	t1 := s1.Begin()
	t1.Append(7, 1)
	t1.Commit()
	t2 := s2.Begin()
	t2.ReadList(7, []int64{1})
	t2.Append(7, 2)
	t2.Commit()
	t3 := s1.Begin()
	t3.ReadList(7, []int64{2, 1}) // the database reordered the list
	t3.Commit()
	res, err := hyperiso.Check(context.Background(), r.History(), "rc")
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Verdict, res.Anomalies[0].Type)
	// Output: violated incompatible-order
}

// A transaction still running when History is taken (a client that died
// mid-commit) is in the history as of unknown outcome: a read of its write
// is then no thin-air read.
func TestRecorderOpenTransaction(t *testing.T) {
	r := hyperiso.NewRecorder()
	a, b := r.Session(), r.Session()
	dying := a.Begin()
	dying.Write(1, 7)
	reader := b.Begin()
	reader.Read(1, 7)
	reader.Commit()
	h := r.History()
	require.Equal(t, 1, h.Stats().Unknown)
	res, err := hyperiso.Check(context.Background(), h, "ser")
	require.NoError(t, err)
	require.Equal(t, hyperiso.Satisfied, res.Verdict, "%+v", res.Anomalies)
	dying.Commit()
	require.Equal(t, 2, r.History().Stats().Committed)
}
