package check_test

import (
	"context"
	"fmt"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats"
	"github.com/hyperiso/hyperiso/history"
)

// Checking a file: formats.Read recognises the format (here hyperiso's
// JSON Lines) and check.Check decides one level. Two transactions read
// both keys and each writes one of them: write skew, which serializability
// forbids.
func ExampleCheck() {
	h, err := formats.Read("../testdata/strong/write-skew.jsonl", formats.Options{})
	if err != nil {
		panic(err)
	}
	res, err := check.Check(context.Background(), h, history.SER, check.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Verdict)
	for _, a := range res.Anomalies {
		fmt.Println(a.Type, a.Class)
	}
	// Output:
	// violated
	// G2-item G2-item
}

// Checking a history built in code: sessions, transactions with Begin,
// their reads and writes, then Finish. Both transactions read x = 0 and
// overwrite it: a lost update, which snapshot isolation forbids and read
// committed allows.
func ExampleCheck_builder() {
	b := history.NewBuilder("lost update", "example")
	b.SetInit(history.InitImplicit, 0) // T⊥, id 0, writes 0 to every key
	b.InitAllKeys(0)
	const x = 1
	t1 := b.Begin(b.Session(1), 1, history.Committed, history.Pos{})
	b.Read(t1, x, 0)
	b.Write(t1, x, 10)
	t2 := b.Begin(b.Session(2), 2, history.Committed, history.Pos{})
	b.Read(t2, x, 0)
	b.Write(t2, x, 20)
	h := b.Finish()

	for _, level := range []history.Level{history.SI, history.RC} {
		res, err := check.Check(context.Background(), h, level, check.Options{})
		if err != nil {
			panic(err)
		}
		fmt.Println(level, res.Verdict)
		for _, a := range res.Anomalies {
			fmt.Println("  ", a.Type)
		}
	}
	// Output:
	// si violated
	//    lost-update
	// rc satisfied
}

// A list-append history: a read returns the whole list, which says in
// which order the appends were installed. The two readers below saw [1 2]
// and [2]: no single order of the appends explains both.
func ExampleCheck_listAppend() {
	b := history.NewBuilder("lists", "example")
	b.SetInit(history.InitImplicit, 0)
	b.InitAllKeys(history.EmptyList) // every list starts empty
	const x = 1
	t1 := b.Begin(b.Session(1), 1, history.Committed, history.Pos{})
	b.Append(t1, x, 1)
	t2 := b.Begin(b.Session(2), 2, history.Committed, history.Pos{})
	b.Append(t2, x, 2)
	t3 := b.Begin(b.Session(3), 3, history.Committed, history.Pos{})
	b.ReadList(t3, x, []int64{1, 2}, history.EmptyList)
	t4 := b.Begin(b.Session(4), 4, history.Committed, history.Pos{})
	b.ReadList(t4, x, []int64{2}, history.EmptyList)
	h := b.Finish()

	res, err := check.Check(context.Background(), h, history.RC, check.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Verdict)
	for _, a := range res.Anomalies {
		fmt.Println(a.Type)
	}
	// Output:
	// violated
	// incompatible-order
}
