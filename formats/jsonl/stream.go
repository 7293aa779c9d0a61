package jsonl

import (
	"bytes"
	"fmt"
	"io"
	"strconv"

	"github.com/hyperiso/hyperiso/history"
)

// IncompleteField is the header field of a history still being recorded:
// {"hyperiso":1,"init":"zero","incomplete":true,…}. A recorder writes it
// first and removes it (Stream.CompleteHeader) once the history is whole; a
// file that still has it was cut short (the recorder was killed, or could
// not write), and its transactions are only those recorded so far.
const IncompleteField = "incomplete"

// StreamOp is one operation of a StreamTxn on integer keys and values: a
// register read or write, (for list-append) an append or a whole-list
// read, or (for rows) an insert, a delete or a predicate read.
type StreamOp struct {
	Write    bool
	Key, Val int64
	// Append makes the operation an append of Val to the list at Key.
	Append bool
	// ReadList makes the operation a read of the whole list at Key, List
	// (oldest element first; empty for the empty list).
	ReadList bool
	List     []int64
	// Insert makes the operation an insert of Val at row Key, Delete a
	// delete of row Key.
	Insert, Delete bool
	// Select makes the operation a predicate read of the keys Key ≤ k <
	// Hi that returned Rows, each a key and its value.
	Select bool
	Hi     int64
	Rows   [][2]int64
}

// StreamTxn is one transaction as a recorder streams it: integer keys and
// values, read or written (a read of history.EmptyList is written as null),
// or lists appended to and read.
type StreamTxn struct {
	Session, ID int64
	Status      history.Status
	Level       history.Level
	// Timed says Start and End are the transaction's real-time interval.
	Timed      bool
	Start, End int64
	Ops        []StreamOp
}

// Stream writes a history line by line as a recorder produces it, without
// keeping it: the header (with init "zero", the TrailerField and, for a
// file completed in place, the IncompleteField), then one line per
// transaction in the order given, then (Trailer) the end line. Read gives back the
// transactions with their sessions, ids, statuses, levels, intervals and
// operations; T⊥ writes 0 to every key of the file (the empty value to a
// key read as null). A Stream does no buffering of its own: each call is
// one Write of whole lines, so that what reached w is always whole lines.
type Stream struct {
	w      io.Writer
	header []byte
	meta   map[string]string
	buf    []byte
	txns   int64
	ops    int64
	ended  bool  // Trailer was called
	err    error // the first failed Flush: the counts no longer match
}

// NewStream writes the header to w, which promises the end line
// (TrailerField): with the IncompleteField if incomplete (a file the
// recorder completes in place), without it for an output that cannot be
// rewritten (a pipe, where the missing end line alone tells a cut).
func NewStream(w io.Writer, meta map[string]string, incomplete bool) (*Stream, error) {
	s := &Stream{w: w, meta: meta}
	s.header = s.appendHeader(nil, incomplete)
	if _, err := w.Write(s.header); err != nil {
		return nil, err
	}
	return s, nil
}

// HeaderLen is the length in bytes of the header line, newline included.
func (s *Stream) HeaderLen() int { return len(s.header) }

// CompleteHeader returns the header without the IncompleteField (still
// with the TrailerField), padded with spaces to the length of the one
// written first, so that it can be written over it at offset 0 once the
// history is whole (after Trailer).
func (s *Stream) CompleteHeader() []byte {
	h := s.appendHeader(nil, false)
	pad := len(s.header) - len(h)
	h = h[:len(h)-1] // the newline
	h = append(h, bytes.Repeat([]byte{' '}, pad)...)
	return append(h, '\n')
}

// Txns counts the transactions written.
func (s *Stream) Txns() int64 { return s.txns }

// Txn appends t to the buffer that Flush writes.
func (s *Stream) Txn(t StreamTxn) error {
	if s.ended {
		return fmt.Errorf("jsonl: transaction %d after the end line", t.ID)
	}
	if t.Status == history.Committed || t.Status == history.Aborted || t.Status == history.Unknown {
		s.buf = appendStreamTxn(s.buf, &t)
		s.txns++
		s.ops += int64(len(t.Ops))
		return nil
	}
	return fmt.Errorf("jsonl: transaction %d has status %v", t.ID, t.Status)
}

// Buffered is the number of bytes Txn added since the last Flush.
func (s *Stream) Buffered() int { return len(s.buf) }

// Flush writes the buffered lines with one Write. After an error the lines
// are dropped: what reached w is whole lines only if w, on error, wrote
// nothing or is cut back by the caller.
func (s *Stream) Flush() error {
	if len(s.buf) == 0 {
		return nil
	}
	_, err := s.w.Write(s.buf)
	s.buf = s.buf[:0]
	if err != nil && s.err == nil {
		s.err = err
	}
	return err
}

// End is what the end line states: the transactions and operations
// written so far, and the lines before the end line (the header and one
// per transaction), as the reader counts them.
func (s *Stream) End() End {
	return End{Txns: s.txns, Ops: s.ops, Lines: 1 + s.txns}
}

// Trailer appends the end line (End) after the last transaction and
// writes it with what is buffered (Flush). It is the last line: Txn fails
// after it. After a failed Flush it writes nothing and returns that
// error, since lines were lost and the counts would not match the file.
func (s *Stream) Trailer() error {
	if s.err != nil {
		return s.err
	}
	if s.ended {
		return fmt.Errorf("jsonl: a second end line")
	}
	s.ended = true
	s.buf = AppendEnd(s.buf, s.End())
	return s.Flush()
}

func (s *Stream) appendHeader(buf []byte, incomplete bool) []byte {
	buf = append(buf, `{"hyperiso":`...)
	buf = strconv.AppendInt(buf, Version, 10)
	buf = append(buf, `,"init":"zero",`+TrailerField...)
	if incomplete {
		buf = append(buf, `,"`+IncompleteField+`":true`...)
	}
	buf = appendMeta(buf, s.meta)
	return append(buf, "}\n"...)
}

func appendStreamTxn(buf []byte, t *StreamTxn) []byte {
	buf = appendTxnHead(buf, t.Session, t.ID, t.Status, t.Level, t.Timed, t.Start, t.End)
	for i, op := range t.Ops {
		if i > 0 {
			buf = append(buf, ',')
		}
		switch {
		case op.Insert:
			buf = append(buf, `["insert",`...)
			buf = strconv.AppendInt(buf, op.Key, 10)
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, op.Val, 10)
			buf = append(buf, ']')
			continue
		case op.Delete:
			buf = append(buf, `["delete",`...)
			buf = strconv.AppendInt(buf, op.Key, 10)
			buf = append(buf, ']')
			continue
		case op.Select:
			buf = append(buf, `["select",{"keys":[`...)
			buf = strconv.AppendInt(buf, op.Key, 10)
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, op.Hi, 10)
			buf = append(buf, "]},["...)
			for j, row := range op.Rows {
				if j > 0 {
					buf = append(buf, ',')
				}
				buf = append(buf, '[')
				buf = strconv.AppendInt(buf, row[0], 10)
				buf = append(buf, ',')
				buf = strconv.AppendInt(buf, row[1], 10)
				buf = append(buf, ']')
			}
			buf = append(buf, "]]"...)
			continue
		case op.ReadList:
			buf = append(buf, `["r",`...)
			buf = strconv.AppendInt(buf, op.Key, 10)
			buf = append(buf, ",["...)
			for j, e := range op.List {
				if j > 0 {
					buf = append(buf, ',')
				}
				buf = strconv.AppendInt(buf, e, 10)
			}
			buf = append(buf, "]]"...)
			continue
		case op.Append:
			buf = append(buf, `["append",`...)
			buf = strconv.AppendInt(buf, op.Key, 10)
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, op.Val, 10)
			buf = append(buf, ']')
			continue
		case op.Write:
			buf = append(buf, `["w",`...)
		default:
			buf = append(buf, `["r",`...)
		}
		buf = strconv.AppendInt(buf, op.Key, 10)
		buf = append(buf, ',')
		if !op.Write && op.Val == history.EmptyList {
			buf = append(buf, "null"...)
		} else {
			buf = strconv.AppendInt(buf, op.Val, 10)
		}
		buf = append(buf, ']')
	}
	return append(buf, "]}\n"...)
}
