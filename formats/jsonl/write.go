package jsonl

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hyperiso/hyperiso/history"
)

// abortedPerLine bounds the pairs of one aborted_writes line.
const abortedPerLine = 1000

// Write writes h in the native format: the header, the init line when
// needed, the transactions in TxnID order (so each session's order is kept)
// and the aborted writes. The output is compact and deterministic, and
// Read gives back h: its sessions and session ids, transaction ids,
// statuses, levels, operations with raw keys and values (a key or value
// read as a name is written as that name, a JSON string), list reads, T⊥'s
// writes, InitKind and id, aborted writes and metadata.
//
// Write fails, writing nothing, on a history the model forbids and the
// format cannot express: T⊥ writing under InitNone, T⊥ with an operation
// other than a write, two transactions with one id (or one with T⊥'s id),
// an empty list read whose value is not EmptyList. Metadata and key names
// must be UTF-8 (invalid bytes are written as U+FFFD).
func Write(w io.Writer, h *history.History) error {
	if err := writable(h); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	buf := make([]byte, 0, 1024)
	buf = appendHeader(buf, h)
	buf = appendInit(buf, h)
	end := End{Lines: int64(bytes.Count(buf, []byte{'\n'}))}
	if _, err := bw.Write(buf); err != nil {
		return err
	}
	for t := 1; t < len(h.Txns); t++ {
		var n int
		buf, n = appendTxn(buf[:0], h, history.TxnID(t))
		if _, err := bw.Write(buf); err != nil {
			return err
		}
		end.Txns++
		end.Ops += int64(n)
	}
	end.Lines += end.Txns + chunks(len(h.AbortedWrites)) + chunks(len(h.VersionHints))
	err := chunked(bw, buf, `{"aborted_writes":[`, len(h.AbortedWrites), func(buf []byte, i int) []byte {
		v := h.AbortedWrites[i]
		buf = appendKey(append(buf, '['), h, v.Key)
		return append(appendValue(append(buf, ','), h, v.Key, v.Value), ']')
	})
	if err != nil {
		return err
	}
	// Version orders stated beyond the lists (ListFacts re-derives those).
	err = chunked(bw, buf, `{"version_order":[`, len(h.VersionHints), func(buf []byte, i int) []byte {
		vh := h.VersionHints[i]
		buf = appendKey(append(buf, '['), h, vh.Key)
		buf = appendValue(append(buf, ','), h, vh.Key, vh.Before)
		return append(appendValue(append(buf, ','), h, vh.Key, vh.After), ']')
	})
	if err != nil {
		return err
	}
	if _, err := bw.Write(AppendEnd(buf[:0], end)); err != nil {
		return err
	}
	return bw.Flush()
}

// chunks is how many lines chunked writes for n items.
func chunks(n int) int64 { return int64((n + abortedPerLine - 1) / abortedPerLine) }

// End is what the end line of a history written by hyperiso states: the
// transaction lines, their operations, and the non-blank lines before
// it (header included). A header with "trailer": true promises one, so
// that a file cut at a line boundary is told from a whole one
// (FORMAT.md, "End line").
type End struct {
	Txns, Ops, Lines int64
}

func (e End) String() string {
	return fmt.Sprintf("%d transactions, %d operations, %d lines", e.Txns, e.Ops, e.Lines)
}

// AppendEnd appends the end line {"end":{...}} stating e, with its
// newline. A writer that streams (collect) writes the header with
// "trailer":true (TrailerField) and this line last.
func AppendEnd(buf []byte, e End) []byte {
	buf = append(buf, `{"end":{"transactions":`...)
	buf = strconv.AppendInt(buf, e.Txns, 10)
	buf = append(buf, `,"operations":`...)
	buf = strconv.AppendInt(buf, e.Ops, 10)
	buf = append(buf, `,"lines":`...)
	buf = strconv.AppendInt(buf, e.Lines, 10)
	return append(buf, "}}\n"...)
}

// TrailerField is the header field that promises an end line.
const TrailerField = `"trailer":true`

// chunked writes n items as lines of at most abortedPerLine array elements,
// each line opened by open and closed by "]}".
func chunked(bw *bufio.Writer, buf []byte, open string, n int, item func([]byte, int) []byte) error {
	for i := 0; i < n; i += abortedPerLine {
		buf = append(buf[:0], open...)
		for j := i; j < min(i+abortedPerLine, n); j++ {
			if j > i {
				buf = append(buf, ',')
			}
			buf = item(buf, j)
		}
		buf = append(buf, "]}\n"...)
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return nil
}

func writable(h *history.History) error {
	if len(h.Txns) == 0 {
		return fmt.Errorf("jsonl: history has no initial transaction")
	}
	init := &h.Txns[history.InitTxn]
	if h.InitKind == history.InitNone && len(init.Ops) > 0 {
		return fmt.Errorf("jsonl: InitKind is none but T⊥ writes %d keys", len(init.Ops))
	}
	for _, op := range init.Ops {
		if op.Kind != history.OpWrite {
			return fmt.Errorf("jsonl: T⊥ has a %v operation; it may only write", op.Kind)
		}
	}
	ids := make(map[int64]bool, len(h.Txns))
	if h.InitKind != history.InitNone {
		ids[init.ID] = true
	}
	for t := 1; t < len(h.Txns); t++ {
		id := h.Txns[t].ID
		if ids[id] {
			return fmt.Errorf("jsonl: transaction id %d is used twice (T⊥ included unless InitKind is none)", id)
		}
		ids[id] = true
	}
	byName := map[string]history.KeyID{}
	for k := range h.Keys {
		name := h.KeyName(history.KeyID(k))
		if name == "" {
			continue
		}
		if other, dup := byName[name]; dup {
			return fmt.Errorf("jsonl: keys %d and %d have the same name %q (a named key is written as its name)", h.Key(other), h.Key(history.KeyID(k)), name)
		}
		byName[name] = history.KeyID(k)
	}
	for t := range h.Txns {
		for _, op := range h.Txns[t].Ops {
			if op.Kind == history.OpReadList && len(h.List(op)) == 0 && h.Value(op.Key, op.Value) != history.EmptyList {
				return fmt.Errorf("jsonl: %s reads an empty list of key %s as value %d, not EmptyList",
					h.TxnString(history.TxnID(t)), h.KeyString(op.Key), h.Value(op.Key, op.Value))
			}
		}
	}
	return nil
}

func initName(k history.InitKind, zero bool) string {
	switch k {
	case history.InitImplicit:
		if zero {
			return initZero
		}
		return initImplicit
	case history.InitExplicit:
		return initExplicit
	}
	return initNone
}

// markRanges calls mark once for each integer key of h in the key range of
// some predicate read.
func markRanges(h *history.History, mark func(history.KeyID)) {
	if len(h.Selects) == 0 {
		return
	}
	keys := make([]history.KeyID, 0, len(h.Keys))
	for k := range h.Keys {
		if h.KeyName(history.KeyID(k)) == "" {
			keys = append(keys, history.KeyID(k))
		}
	}
	slices.SortFunc(keys, func(x, y history.KeyID) int { return cmp.Compare(h.Keys[x], h.Keys[y]) })
	depth := make([]int32, len(keys)+1)
	at := func(raw int64) int {
		i, _ := slices.BinarySearchFunc(keys, raw, func(k history.KeyID, raw int64) int { return cmp.Compare(h.Keys[k], raw) })
		return i
	}
	for _, s := range h.Selects {
		depth[at(s.Lo)]++
		depth[at(s.Hi)]--
	}
	var d int32
	for i, k := range keys {
		if d += depth[i]; d > 0 {
			mark(k)
		}
	}
}

// initPlan decides how T⊥ is written. Under "zero" the reader derives the
// initial value of every key (0, or EmptyList for keys used as lists), so
// only writes that differ from that, or of keys the rest of the file does
// not mention, go in the init line. "zero" is possible only when T⊥ writes
// every key the file mentions, as the reader fills in all of them.
func initPlan(h *history.History) (zero bool, line []history.Op) {
	init := h.Txns[history.InitTxn].Ops
	if h.InitKind != history.InitImplicit {
		return false, init
	}
	const (
		mentioned = 1 << iota
		listish
	)
	use := make([]uint8, len(h.Keys))
	for t := 1; t < len(h.Txns); t++ {
		for _, op := range h.Txns[t].Ops {
			use[op.Key] |= mentioned
			if op.Kind == history.OpAppend || op.Kind == history.OpReadList || op.Src != history.SrcPlain ||
				op.Kind == history.OpRead && h.Value(op.Key, op.Value) == history.EmptyList {
				use[op.Key] |= listish
			}
		}
	}
	// A key in a predicate read's range is a row even where the read kept
	// no operation for it (history.Select: aborted readers, inert rows).
	markRanges(h, func(k history.KeyID) { use[k] |= listish })
	for _, v := range h.AbortedWrites {
		use[v.Key] |= mentioned
	}
	for _, v := range h.VersionHints {
		use[v.Key] |= mentioned
	}
	for k, name := range h.KeyNames {
		if name != "" {
			use[k] |= mentioned
		}
	}
	covered := make([]bool, len(h.Keys))
	for _, op := range init {
		covered[op.Key] = true
	}
	for k, u := range use {
		if u&mentioned != 0 && !covered[k] {
			return false, init
		}
	}
	line = []history.Op{}
	for _, op := range init {
		want := int64(0)
		if use[op.Key]&listish != 0 {
			want = history.EmptyList
		}
		if use[op.Key]&mentioned == 0 || h.Value(op.Key, op.Value) != want || h.ValueName(op.Key, op.Value) != "" {
			line = append(line, op)
		}
	}
	return true, line
}

func appendHeader(buf []byte, h *history.History) []byte {
	zero, _ := initPlan(h)
	buf = append(buf, `{"hyperiso":`...)
	buf = strconv.AppendInt(buf, Version, 10)
	buf = append(buf, `,"init":"`...)
	buf = append(buf, initName(h.InitKind, zero)...)
	buf = append(buf, '"', ',')
	buf = append(buf, TrailerField...)
	buf = appendMeta(buf, h.Meta)
	if h.Dropped.Any() {
		buf = append(buf, `,"dropped":`...)
		buf = appendTuple(buf, int64(h.Dropped.Txns), int64(h.Dropped.Ops), int64(h.Dropped.Other))
	}
	if needSessionList(h) {
		buf = append(buf, `,"sessions":[`...)
		for i, s := range h.Sessions {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendInt(buf, s.ID, 10)
		}
		buf = append(buf, ']')
	}
	// A named key that no line mentions keeps its name only here.
	var named []history.KeyID
	for k := range h.KeyNames {
		if h.KeyName(history.KeyID(k)) != "" && !written(h, history.KeyID(k)) {
			named = append(named, history.KeyID(k))
		}
	}
	if len(named) > 0 {
		buf = append(buf, `,"key_names":[`...)
		for i, k := range named {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, '[')
			buf = strconv.AppendInt(buf, h.Key(k), 10)
			buf = append(buf, ',')
			buf = appendString(buf, h.KeyNames[k])
			buf = append(buf, ']')
		}
		buf = append(buf, ']')
	}
	return append(buf, "}\n"...)
}

// written reports whether Write puts key k on some line (by its name, if
// it has one).
func written(h *history.History, k history.KeyID) bool {
	for t := 1; t < len(h.Txns); t++ {
		for _, op := range h.Txns[t].Ops {
			if op.Key == k {
				return true
			}
		}
	}
	for _, v := range h.AbortedWrites {
		if v.Key == k {
			return true
		}
	}
	for _, v := range h.VersionHints {
		if v.Key == k {
			return true
		}
	}
	_, line := initPlan(h)
	for _, op := range line {
		if op.Key == k {
			return true
		}
	}
	return false
}

// needSessionList reports whether the reader, which creates sessions in
// order of first appearance, would get the session order wrong without the
// header's list: sessions without transactions, or an order that is not
// the order of their first transactions.
func needSessionList(h *history.History) bool {
	next := int32(0)
	for t := 1; t < len(h.Txns); t++ {
		s := h.Txns[t].Session
		switch {
		case s == next:
			next++
		case s > next:
			return true
		}
	}
	return int(next) != len(h.Sessions)
}

func appendInit(buf []byte, h *history.History) []byte {
	zero, ops := initPlan(h)
	init := &h.Txns[history.InitTxn]
	if len(ops) == 0 && init.ID == defaultInitID(initName(h.InitKind, zero)) {
		return buf
	}
	buf = append(buf, `{"init":true,"id":`...)
	buf = strconv.AppendInt(buf, init.ID, 10)
	buf = append(buf, `,"ops":[`...)
	// Integer keys in ascending order, then named keys by name: an order
	// that does not depend on the stand-ins of named keys.
	ops = slices.Clone(ops)
	slices.SortStableFunc(ops, func(x, y history.Op) int {
		nx, ny := h.KeyName(x.Key), h.KeyName(y.Key)
		switch {
		case nx == "" && ny == "":
			return cmp.Compare(h.Key(x.Key), h.Key(y.Key))
		case nx == "":
			return -1
		case ny == "":
			return 1
		}
		return strings.Compare(nx, ny)
	})
	for i, op := range ops {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `["w",`...)
		buf = appendKey(buf, h, op.Key)
		buf = append(buf, ',')
		buf = appendValue(buf, h, op.Key, op.Value)
		buf = append(buf, ']')
	}
	return append(buf, "]}\n"...)
}

var opNames = [...]string{
	history.OpRead:     `["r",`,
	history.OpWrite:    `["w",`,
	history.OpAppend:   `["append",`,
	history.OpReadList: `["r",`,
}

// appendMeta writes a header's "meta" field, its keys sorted, when there
// is one.
func appendMeta(buf []byte, meta map[string]string) []byte {
	if len(meta) == 0 {
		return buf
	}
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	buf = append(buf, `,"meta":{`...)
	for i, k := range keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendString(buf, k)
		buf = append(buf, ':')
		buf = appendString(buf, meta[k])
	}
	return append(buf, '}')
}

// appendTxnHead writes a transaction line up to its operations: session,
// id, and status, level and time where they are not the defaults.
func appendTxnHead(buf []byte, session, id int64, status history.Status, level history.Level, timed bool, start, end int64) []byte {
	buf = append(buf, `{"session":`...)
	buf = strconv.AppendInt(buf, session, 10)
	buf = append(buf, `,"id":`...)
	buf = strconv.AppendInt(buf, id, 10)
	if status != history.Committed {
		buf = append(buf, `,"status":"`...)
		buf = append(buf, status.String()...)
		buf = append(buf, '"')
	}
	if level != history.LevelNone {
		buf = append(buf, `,"level":"`...)
		buf = append(buf, level.String()...)
		buf = append(buf, '"')
	}
	if timed {
		buf = append(buf, `,"time":`...)
		buf = appendTuple(buf, start, end)
	}
	return append(buf, `,"ops":[`...)
}

// appendTxn writes t's line and returns it with the number of operations
// written: a predicate read is one, however many rows it expanded to.
func appendTxn(buf []byte, h *history.History, t history.TxnID) ([]byte, int) {
	tx := &h.Txns[t]
	buf = appendTxnHead(buf, h.Sessions[tx.Session].ID, tx.ID, tx.Status, tx.Level, tx.Timed, tx.Start, tx.End)
	sels := h.SelectsOf(t)
	n := 0
	sep := func() {
		if n > 0 {
			buf = append(buf, ',')
		}
		n++
	}
	for i := 0; i <= len(tx.Ops); i++ {
		// The predicate reads at this place (one with no rows takes
		// none of the operations).
		for len(sels) > 0 && int(sels[0].At) == i {
			sep()
			buf = appendSelect(buf, h, sels[0])
			i += int(sels[0].N)
			sels = sels[1:]
		}
		if i >= len(tx.Ops) {
			break
		}
		op := tx.Ops[i]
		sep()
		switch op.Src {
		case history.SrcInsert:
			buf = append(buf, `["insert",`...)
			buf = appendKey(buf, h, op.Key)
			buf = append(buf, ',')
			buf = appendValue(buf, h, op.Key, op.Value)
			buf = append(buf, ']')
			continue
		case history.SrcDelete:
			buf = append(buf, `["delete",`...)
			buf = appendKey(buf, h, op.Key)
			buf = append(buf, ']')
			continue
		}
		buf = append(buf, opNames[op.Kind]...)
		buf = appendKey(buf, h, op.Key)
		buf = append(buf, ',')
		switch v := h.Value(op.Key, op.Value); {
		case op.Kind == history.OpReadList:
			buf = append(buf, '[')
			for j, e := range h.List(op) {
				if j > 0 {
					buf = append(buf, ',')
				}
				buf = appendValue(buf, h, op.Key, e)
			}
			buf = append(buf, ']')
		case op.Kind == history.OpRead && v == history.EmptyList && h.ValueName(op.Key, op.Value) == "":
			buf = append(buf, "null"...)
		default:
			buf = appendValue(buf, h, op.Key, op.Value)
		}
		buf = append(buf, ']')
	}
	return append(buf, "]}\n"...), n
}

// appendSelect writes a predicate read: its key range, its value test and the rows it
// returned (its row reads of a value other than the empty one), in key
// order.
func appendSelect(buf []byte, h *history.History, s history.Select) []byte {
	buf = append(buf, `["select",{"keys":`...)
	buf = appendTuple(buf, s.Lo, s.Hi)
	if t := s.Test; t != nil && t.HasIn {
		buf = append(buf, `,"in":[`...)
		for i, v := range t.In {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendInt(buf, v, 10)
		}
		buf = append(buf, ']')
	}
	if t := s.Test; t != nil && t.HasRange {
		buf = append(buf, `,"values":`...)
		buf = appendTuple(buf, t.VLo, t.VHi)
	}
	if t := s.Test; t != nil && t.HasMod {
		buf = append(buf, `,"mod":`...)
		buf = appendTuple(buf, t.Mod, t.Rem)
	}
	buf = append(buf, "},["...)
	first := true
	for _, op := range s.Ops(h) {
		if absent(h, op) {
			continue
		}
		if !first {
			buf = append(buf, ',')
		}
		first = false
		buf = append(buf, '[')
		buf = strconv.AppendInt(buf, h.Key(op.Key), 10)
		buf = append(buf, ',')
		buf = appendValue(buf, h, op.Key, op.Value)
		buf = append(buf, ']')
	}
	return append(buf, "]]"...)
}

// absent reports whether op reads or writes the empty value (an absent
// row, a missing key, the empty list).
func absent(h *history.History, op history.Op) bool {
	return h.Value(op.Key, op.Value) == history.EmptyList && h.ValueName(op.Key, op.Value) == ""
}

// appendKey writes key k: its name as a JSON string if it was read as
// one, else the integer.
func appendKey(buf []byte, h *history.History, k history.KeyID) []byte {
	if name := h.KeyName(k); name != "" {
		return appendString(buf, name)
	}
	return strconv.AppendInt(buf, h.Key(k), 10)
}

// appendValue writes version (k, v) as appendKey writes keys.
func appendValue(buf []byte, h *history.History, k history.KeyID, v history.ValueID) []byte {
	if name := h.ValueName(k, v); name != "" {
		return appendString(buf, name)
	}
	return strconv.AppendInt(buf, h.Value(k, v), 10)
}

// appendTuple writes the integers as a JSON array.
func appendTuple(buf []byte, xs ...int64) []byte {
	buf = append(buf, '[')
	for i, x := range xs {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = strconv.AppendInt(buf, x, 10)
	}
	return append(buf, ']')
}

// appendString writes s as a JSON string. Invalid UTF-8 becomes U+FFFD, as
// in encoding/json; nothing else is escaped beyond what JSON requires.
func appendString(buf []byte, s string) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				buf = append(buf, '\\', c)
			case c == '\n':
				buf = append(buf, '\\', 'n')
			case c == '\r':
				buf = append(buf, '\\', 'r')
			case c == '\t':
				buf = append(buf, '\\', 't')
			case c < 0x20:
				buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				buf = append(buf, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			buf = append(buf, `\ufffd`...)
		} else {
			buf = append(buf, s[i:i+n]...)
		}
		i += n
	}
	return append(buf, '"')
}
