package hyperiso_test

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/hyperiso/hyperiso"
	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/memstore"
)

// Example (write skew): two goroutines, each a client of the embedded store
// at snapshot isolation, repeatedly read two keys and write one of them, as
// an on-call rota does. Snapshot isolation lets both commit on the same
// snapshot; the recorded history says so at SER and passes at SI.
func Example_writeSkew() {
	ctx := context.Background()
	store := memstore.New(memstore.Options{Seed: 1})
	if err := store.Setup(ctx, 2); err != nil {
		panic(err)
	}
	rec := hyperiso.NewRecorder()
	conns := make([]collect.Conn, 2)
	for i := range conns {
		c, err := store.Connect(ctx) // every session connects before any runs
		if err != nil {
			panic(err)
		}
		conns[i] = c
	}
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			sess := rec.Session()
			mine := int64(i + 1) // the key this client writes
			for round := range 20 {
				tx, err := c.Begin(ctx, collect.Snapshot)
				if err != nil {
					panic(err)
				}
				t := sess.Begin()
				for _, k := range []int64{1, 2} {
					v, _, err := tx.Read(ctx, k)
					if err != nil {
						panic(err)
					}
					t.Read(k, v)
				}
				val := int64(100*(i+1) + round) // unique: a read names its writer
				if err := tx.Write(ctx, mine, val); err != nil {
					panic(err)
				}
				t.Write(mine, val)
				var abort *collect.AbortError
				switch err := tx.Commit(ctx); {
				case err == nil:
					t.Commit()
				case errors.As(err, &abort):
					t.Abort()
				default:
					t.Unknown() // the answer was lost: it may have committed
				}
			}
		}()
	}
	wg.Wait()
	for _, level := range []string{"ser", "si"} {
		res, err := hyperiso.Check(ctx, rec.History(), level)
		if err != nil {
			panic(err)
		}
		fmt.Println(level, res.Verdict)
		for _, a := range res.Anomalies {
			fmt.Println("  ", a.Type)
		}
	}
	// Output:
	// ser violated
	//    G2-item
	// si satisfied
}
