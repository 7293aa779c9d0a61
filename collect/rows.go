package collect

// Rows: the interface of a store whose keys are rows that come and go, for
// the predicate workload and Hermitage's predicate scenarios, and how the
// recorder runs and records their operations (docs/predicates.md).

import (
	"context"
	"fmt"

	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/history"
)

// Row is one live row: its key and value.
type Row struct{ Key, Val int64 }

// RowStore is a store that also holds rows that may be absent, for the
// predicate workload: its transactions are RowTxs. A store that is no
// RowStore refuses that workload.
type RowStore interface {
	Store
	// SetupRows creates the store's table, as Setup does, holding rows
	// and nothing else: every other key is absent.
	SetupRows(ctx context.Context, rows []Row) error
}

// RowTx is the row part of a RowStore's transactions. Every operation is
// one statement. After an error the recorder calls Abort, as after Read or
// Write.
type RowTx interface {
	// Insert makes row key live with value val whatever its state (an
	// upsert: a blind write, as the history's insert is).
	Insert(ctx context.Context, key, val int64) error
	// Delete makes row key absent whatever its state, and reports
	// whether the store wrote that: a SQL DELETE that matched no row
	// writes nothing (no version, no lock, no write conflict), so the
	// recorder records no delete then.
	Delete(ctx context.Context, key int64) (wrote bool, err error)
	// Select returns the live rows with lo <= key < hi (SQL's
	// BETWEEN lo AND hi-1), in any order.
	Select(ctx context.Context, lo, hi int64) ([]Row, error)
	// DeleteRange deletes the rows with lo <= key < hi in one statement
	// and returns those it deleted, with the values they had.
	DeleteRange(ctx context.Context, lo, hi int64) ([]Row, error)
	// Move moves row from to key to with value val in one UPDATE (SET
	// key = to, value = val WHERE key = from) and reports whether it
	// did: not if from was absent, nor if to was live (the duplicate
	// key is refused and the statement undone; the transaction goes on).
	Move(ctx context.Context, from, to, val int64) (moved bool, err error)
}

// NoRowsError is the refusal of a store that is no RowStore to run a
// workload of rows.
type NoRowsError struct {
	Store, Workload string
}

func (e *NoRowsError) Error() string {
	return fmt.Sprintf("the %s store cannot run the %s workload: it has no rows (inserts, deletes and range reads)", e.Store, e.Workload)
}

// rowOp runs one row operation of the predicate workload and records it:
// an insert as itself, a delete as itself if it wrote (Delete), a read of
// one row as a point read (of its value, or of its absence); a range read as a predicate read over
// its range with the rows returned (every other key of the range was
// observed absent); a move that moved as the delete of its source and the
// insert of its target, and one that did not as nothing (what it saw is
// not recorded: a database checks a duplicate key against the latest
// state, outside the transaction's snapshot).
func (r *runner) rowOp(ctx context.Context, tx Tx, op workload.Op, rec *record) error {
	rt, ok := tx.(RowTx)
	if !ok {
		return fmt.Errorf("%s: transactions have no rows", r.st.Name())
	}
	octx, cancel := r.opCtx(ctx)
	defer cancel()
	switch op.Kind {
	case workload.Insert:
		if err := rt.Insert(octx, op.Key, op.Value); err != nil {
			return err
		}
		rec.ops = append(rec.ops, opRecord{kind: history.OpWrite, src: history.SrcInsert, key: op.Key, val: op.Value})
	case workload.Delete:
		wrote, err := rt.Delete(octx, op.Key)
		if err != nil {
			return err
		}
		if wrote {
			rec.ops = append(rec.ops, opRecord{kind: history.OpWrite, src: history.SrcDelete, key: op.Key})
		}
	case workload.Select:
		rows, err := rt.Select(octx, op.Key, op.To)
		if err != nil {
			return err
		}
		if err := checkRows(rows, op.Key, op.To); err != nil {
			return fmt.Errorf("%s: %w", r.st.Name(), err)
		}
		rec.ops = append(rec.ops, opRecord{kind: history.OpRead, src: history.SrcSelect, key: op.Key, hi: op.To, rows: rows})
	case workload.ReadRow:
		// A range read of the one key, so that a read that finds the
		// key twice (PostgreSQL's REPEATABLE READ can: an old row its
		// snapshot still shows beside the one it inserted) is refused
		// rather than recorded as one of them.
		rows, err := rt.Select(octx, op.Key, op.Key+1)
		if err != nil {
			return err
		}
		if err := checkRows(rows, op.Key, op.Key+1); err != nil {
			return fmt.Errorf("%s: %w", r.st.Name(), err)
		}
		v := history.EmptyList
		if len(rows) == 1 {
			v = rows[0].Val
		}
		rec.ops = append(rec.ops, opRecord{kind: history.OpRead, key: op.Key, val: v})
	case workload.Move:
		moved, err := rt.Move(octx, op.Key, op.To, op.Value)
		if err != nil {
			return err
		}
		if moved {
			rec.ops = append(rec.ops,
				opRecord{kind: history.OpWrite, src: history.SrcDelete, key: op.Key},
				opRecord{kind: history.OpWrite, src: history.SrcInsert, key: op.To, val: op.Value})
		}
	default:
		return fmt.Errorf("collect: %s is no row operation", op.Kind)
	}
	return nil
}

// checkRows refuses a range read's answer that no history can hold: a row
// outside the range, a key twice, or the value that stands for absent.
func checkRows(rows []Row, lo, hi int64) error {
	seen := make(map[int64]bool, len(rows))
	for _, row := range rows {
		switch {
		case row.Key < lo || row.Key >= hi:
			return fmt.Errorf("a read of keys [%d,%d) returned key %d", lo, hi, row.Key)
		case seen[row.Key]:
			return fmt.Errorf("a read of keys [%d,%d) returned key %d twice", lo, hi, row.Key)
		case row.Val == history.EmptyList:
			return fmt.Errorf("a read of keys [%d,%d) returned key %d with the value that stands for absent", lo, hi, row.Key)
		}
		seen[row.Key] = true
	}
	return nil
}
