// Package cobra owns hyperiso's reader of Cobra log directories (docs/formats.md):
// which T<n>.log files make a history and in which order, the binary
// record stream and its structural validation (fatal errors C1–C9 with file
// and byte offset), the two write-id flavours and their detection, and the
// mapping of §3.5 that turns Cobra's (write id, writer, value hash) triples
// into dense value identities.
//
// An operation's value in the History is its identity (1, 2, 3, … in scan
// order), not the value hash of the log; the raw write ids and hashes are
// not kept, but every transaction's Pos points at its S record. Meta holds
// cobra.flavour (the flavour read) and cobra.detected_flavour.
package cobra

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hyperiso/hyperiso/history"
)

// Flavour says how a read is matched to the write it observed (§3.4).
type Flavour uint8

const (
	// Auto detects the flavour: universal if any write has the UNIVERSAL
	// write id, unique otherwise.
	Auto Flavour = iota
	// Unique is the classic Cobra log (VeriStrong's cobra-uv): every write
	// has its own write id and every read names its writer, so values are
	// told apart by writer even when the value hashes repeat.
	Unique
	// Universal is VeriStrong's benchmark log (its cobra reading): writers
	// are not recorded and reads match writes by raw (key, value hash), so
	// duplicate values stay duplicates.
	Universal
)

var flavourNames = [...]string{"auto", "unique", "universal"}

func (f Flavour) String() string {
	if int(f) < len(flavourNames) {
		return flavourNames[f]
	}
	return "Flavour(" + strconv.Itoa(int(f)) + ")"
}

// ParseFlavour accepts "auto", "unique" and "universal", and VeriStrong's
// names for the latter two, "cobra-uv" and "cobra".
func ParseFlavour(s string) (Flavour, bool) {
	switch s {
	case "auto", "":
		return Auto, true
	case "unique", "cobra-uv":
		return Unique, true
	case "universal", "cobra":
		return Universal, true
	}
	return Auto, false
}

// Options tune the reader.
type Options struct {
	// Lenient keeps a transaction still open at the end of its file (C7)
	// with status Unknown instead of failing.
	Lenient bool
	// Flavour overrides the detection of §3.4.
	Flavour Flavour
}

// Sentinel ids of §3.3, as the signed 64-bit numbers the logs hold.
const (
	// InitID marks a read of the initial state; it is also the id of the
	// initial transaction in the History.
	InitID int64 = 0xbebeebee
	// NullID marks a read of a key that did not exist.
	NullID int64 = 0xdeadbeef
	// UniversalID is the write id of every write (and the writer of every
	// non-initial read) in universal-flavour logs.
	UniversalID int64 = 0xabddefee
	// GCTrue and GCFalse are write ids of reads issued by Cobra's online
	// garbage collector.
	GCTrue  int64 = 0x23332333
	GCFalse int64 = 0x66666666
)

// Record sizes, opcode byte included.
const (
	sizeS = 9
	sizeC = 9
	sizeW = 25
	sizeR = 33
)

// maxWarningsPerKind bounds the warnings of one kind; the rest are counted
// in a summary warning (a log read in the wrong flavour has a thin-air read
// per read). A variable so tests can change it.
var maxWarningsPerKind = 20

// Log is one client's log: Name is its file name (the base name decides
// the session order and id, §3.1; the whole name appears in positions) and
// Data its bytes.
type Log struct {
	Name string
	Data io.Reader
}

// Read reads the Cobra history in directory dir: every file whose name ends
// in ".log"; other files (.debug, .error) are ignored. An entry named *.log
// that is not a readable regular file (or a link to one) is an error, never
// skipped: its transactions would be missing from the history.
func Read(dir string, opt Options) (*history.History, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, history.Errorf(history.Pos{File: dir}, "not a directory: a Cobra history is a directory of T<n>.log files")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []*logFile
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".log") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if err := CheckLogFile(path); err != nil {
			return nil, err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, history.Errorf(fileOnly(path), "cannot read this log: %v", bare(err))
		}
		files = append(files, &logFile{name: path, base: e.Name(), data: data})
	}
	if len(files) == 0 {
		return nil, history.Errorf(history.Pos{File: dir}, "no .log file in the directory: not a Cobra history")
	}
	return parse(dir, files, opt)
}

// CheckLogFile says why path, an entry named *.log of a Cobra history
// directory, cannot be read as a log, or returns nil. It looks at the mode
// only and never opens the file: opening a FIFO would block.
func CheckLogFile(path string) error {
	const must = "every *.log file of a Cobra history must be a client log"
	lst, err := os.Lstat(path)
	if err != nil {
		return history.Errorf(fileOnly(path), "cannot read this log: %v", bare(err))
	}
	st := lst
	if lst.Mode()&fs.ModeSymlink != 0 {
		target, _ := os.Readlink(path)
		if st, err = os.Stat(path); err != nil {
			return history.Errorf(fileOnly(path), "a symbolic link to %s, which cannot be read (%v); %s", target, bare(err), must)
		}
	}
	if !st.Mode().IsRegular() {
		return history.Errorf(fileOnly(path), "a %s, not a regular file; %s", modeName(st.Mode()), must)
	}
	return nil
}

// fileOnly is the position of a whole file.
func fileOnly(path string) history.Pos { return history.Pos{File: path, Offset: -1} }

// bare drops the path an *fs.PathError repeats.
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func modeName(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file (" + m.Type().String() + ")"
}

// ParseLogs reads a Cobra history from logs, ordered and numbered by name as
// Read does with the files of a directory. source names the history. Each
// log is read into memory whole: the flavour must be known before the first
// identity is assigned, so the records are scanned twice.
func ParseLogs(source string, logs []Log, opt Options) (*history.History, error) {
	if len(logs) == 0 {
		return nil, history.Errorf(history.Pos{File: source}, "no .log file: not a Cobra history")
	}
	files := make([]*logFile, len(logs))
	for i, l := range logs {
		data, err := io.ReadAll(l.Data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.Name, err)
		}
		files[i] = &logFile{name: l.Name, base: filepath.Base(l.Name), data: data}
	}
	return parse(source, files, opt)
}

// logFile is one log being read.
type logFile struct {
	name     string // for positions
	base     string // for ordering
	session  int64
	numbered bool // named T<n>.log
	data     []byte
	// openAt is 1 + the offset of a transaction left open at the end of the
	// file (lenient mode only), 0 if none.
	openAt int64
}

// order sorts files as §3.1 says: T<n>.log by n, then any other name by
// name. Other names get ids after the largest n, not their position as
// §3.1 suggests, so that they can never take the id of a T<n>.log file.
func order(source string, files []*logFile) error {
	for _, f := range files {
		f.session, f.numbered = threadNumber(f.base)
	}
	slices.SortStableFunc(files, func(a, b *logFile) int {
		switch {
		case a.numbered && b.numbered:
			return cmp.Compare(a.session, b.session)
		case a.numbered:
			return -1
		case b.numbered:
			return 1
		}
		return strings.Compare(a.base, b.base)
	})
	next := int64(0)
	for _, f := range files {
		if f.numbered {
			next = f.session + 1
		}
	}
	for i, f := range files {
		if !f.numbered {
			if next < 0 {
				return history.Errorf(history.Pos{File: f.name}, "no session id left for this log after T%d.log", int64(math.MaxInt64))
			}
			f.session = next
			next++
		}
		if i > 0 && f.base == files[i-1].base {
			return history.Errorf(history.Pos{File: f.name}, "two logs named %s in %s", f.base, source)
		}
	}
	return nil
}

// threadNumber returns n for a name T<n>.log with n in canonical decimal
// (so that T1.log and T01.log cannot both claim session 1).
func threadNumber(base string) (int64, bool) {
	s, ok := strings.CutPrefix(base, "T")
	if !ok {
		return 0, false
	}
	s, _ = strings.CutSuffix(s, ".log")
	if s == "" || (s[0] == '0' && len(s) > 1) || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func parse(source string, files []*logFile, opt Options) (*history.History, error) {
	if opt.Flavour > Universal {
		return nil, fmt.Errorf("cobra: unknown flavour %d", opt.Flavour)
	}
	if err := order(source, files); err != nil {
		return nil, err
	}
	s := scanner{files: files, opt: opt, txns: make(map[int64]loc)}
	for i := range files {
		if err := s.scan(int32(i)); err != nil {
			return nil, err
		}
	}
	b := history.NewBuilder(source, "cobra")
	bd := builder{scanner: &s, b: b}
	// The scan counted the transactions and operations: room for them,
	// and for about half as many identities as operations (a write and a
	// read of it), saves growing the arrays and tables step by step,
	// copying them and leaving garbage.
	b.Reserve(len(s.txns), s.ops)
	bd.ids.reserve(s.ops / 2)
	b.ReserveAdded(s.ops / 2)
	bd.pending = make([]pendingRead, 0, s.reads)
	detected := Unique
	if s.universalW > 0 {
		detected = Universal
	}
	fl := opt.Flavour
	switch {
	case fl == Auto:
		fl = detected
		if s.universalW > 0 && s.otherW > 0 {
			bd.w.add(kindFlavour, s.pos(s.firstOtherW), "mixed flavour: %d writes have the UNIVERSAL write id and %d do not; reading as universal",
				s.universalW, s.otherW)
		}
	case fl == Unique && s.universalW > 0:
		bd.w.add(kindFlavour, s.pos(s.firstUniversalW), "read as unique flavour, but %d writes have the UNIVERSAL write id: no read can match them", s.universalW)
	case fl == Universal && s.otherW > 0:
		bd.w.add(kindFlavour, s.pos(s.firstOtherW), "read as universal flavour, but %d writes have their own write id: reads that name their writer cannot match them", s.otherW)
	}
	if fl == Unique {
		// Only this flavour names writes by their ids.
		if d := s.indexWriteIDs(); d.second.file >= 0 {
			return nil, history.Errorf(s.pos(d.second), "write id %s is already used by the write at %s (unique-write-id flavour needs distinct write ids)",
				hexID(d.wid), s.pos(d.first))
		}
	}
	bd.flavour = fl
	b.SetMeta("cobra.flavour", fl.String())
	b.SetMeta("cobra.detected_flavour", detected.String())
	b.SetInit(history.InitImplicit, InitID)
	for i := range files {
		bd.build(int32(i))
	}
	return bd.finish(), nil
}

// loc is a position: an index into the files and a byte offset.
type loc struct {
	file int32
	off  int64
}

// scanner is the first pass: it checks the structure of every log (C1–C7),
// finds duplicate transaction and write ids, and counts writes by write-id
// kind for the flavour detection. The second pass then trusts the structure.
type scanner struct {
	files []*logFile
	opt   Options
	txns  map[int64]loc // where each transaction id starts (C6)
	// wids is, in the unique flavour once indexWriteIDs has run, where
	// each write id is first written.
	wids                         widTable
	universalW, otherW           int
	ops, reads                   int // W and R records, R records
	firstUniversalW, firstOtherW loc
}

func (s *scanner) pos(l loc) history.Pos {
	return history.Pos{File: s.files[l.file].name, Offset: l.off}
}

func be64(b []byte) int64 {
	_ = b[7]
	return int64(uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
		uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7]))
}

// hexID renders a transaction or write id as the logs' tools print them.
func hexID(id int64) string { return fmt.Sprintf("%#x", uint64(id)) }

var recordNames = map[byte]string{'S': "S (start)", 'C': "C (commit)", 'W': "W (write)", 'R': "R (read)"}

func (s *scanner) scan(fi int32) error {
	f := s.files[fi]
	d := f.data
	at := func(off int) history.Pos { return history.Pos{File: f.name, Offset: int64(off)} }
	if len(d) > 0 && d[0] == '{' {
		return history.Errorf(at(0), "this is a Viper JSON log (docs/formats.md, section viper), not a Cobra log: read it with --format viper")
	}
	open, openAt := false, 0
	var cur int64
	off := 0
	for off < len(d) {
		op := d[off]
		var size int
		switch op {
		case 'S':
			size = sizeS
		case 'C':
			size = sizeC
		case 'W':
			size = sizeW
		case 'R':
			size = sizeR
		case 'A':
			return history.Errorf(at(off), "record type byte 0x41 ('A'): Cobra logs have no abort record (aborted transactions are not logged)")
		default:
			return history.Errorf(at(off), "unknown record type byte 0x%02x at a record start (want S, C, W or R)", op)
		}
		if off+size > len(d) {
			return history.Errorf(at(off), "truncated: file ends at byte %d, inside the %d-byte %s record that starts here",
				len(d), size, recordNames[op])
		}
		r := d[off+1 : off+size]
		switch op {
		case 'S':
			id := be64(r)
			if open {
				return history.Errorf(at(off), "S of transaction %s while transaction %s, started at byte %d, is still open",
					hexID(id), hexID(cur), openAt)
			}
			if id == InitID {
				return history.Errorf(at(off), "transaction id %s is the initial transaction's sentinel id", hexID(id))
			}
			if prev, dup := s.txns[id]; dup {
				return history.Errorf(at(off), "transaction id %s started twice: first at %s", hexID(id), s.pos(prev))
			}
			s.txns[id] = loc{fi, int64(off)}
			open, openAt, cur = true, off, id
		case 'C':
			id := be64(r)
			if !open {
				return history.Errorf(at(off), "C of transaction %s with no open transaction", hexID(id))
			}
			if id != cur {
				return history.Errorf(at(off), "C of transaction %s, but the open transaction is %s, started at byte %d",
					hexID(id), hexID(cur), openAt)
			}
			open = false
		case 'W', 'R':
			if !open {
				return history.Errorf(at(off), "%s record outside a transaction (no S before it)", recordNames[op])
			}
			s.ops++
			if op == 'W' {
				s.write(fi, off, be64(r))
			} else {
				s.reads++
			}
		}
		off += size
	}
	if open {
		if !s.opt.Lenient {
			return history.Errorf(at(openAt), "transaction %s is still open when the file ends at byte %d (client crashed or file truncated)",
				hexID(cur), len(d))
		}
		f.openAt = int64(openAt) + 1
	}
	return nil
}

func (s *scanner) write(fi int32, off int, wid int64) {
	here := loc{fi, int64(off)}
	if wid == UniversalID {
		if s.universalW == 0 {
			s.firstUniversalW = here
		}
		s.universalW++
		return
	}
	if s.otherW == 0 {
		s.firstOtherW = here
	}
	s.otherW++
}
