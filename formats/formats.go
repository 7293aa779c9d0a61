// Package formats picks the reader for a history file or directory: by the
// --format the user named, or by recognising the path and its first bytes
// (docs/formats.md). The readers themselves live in one sub-package each.
package formats

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/hyperiso/hyperiso/formats/awdit"
	"github.com/hyperiso/hyperiso/formats/cobra"
	"github.com/hyperiso/hyperiso/formats/dbcop"
	"github.com/hyperiso/hyperiso/formats/elle"
	"github.com/hyperiso/hyperiso/formats/internal/express"
	"github.com/hyperiso/hyperiso/formats/internal/lineio"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/formats/text"
	"github.com/hyperiso/hyperiso/formats/viper"
	"github.com/hyperiso/hyperiso/history"
)

// Names lists the formats accepted by Read, "auto" first.
var Names = []string{"auto", "jsonl", "dbcop", "cobra", "text", "awdit", "elle", "viper"}

// Options select and tune a reader.
type Options struct {
	// Format is one of Names; "" means auto.
	Format string
	// Lenient turns recoverable structural errors into warnings.
	Lenient bool
	// CobraFlavour is "auto", "unique" or "universal" (docs/formats.md).
	CobraFlavour string
	// Stdin is what the path "-" reads; nil means os.Stdin.
	Stdin io.Reader
}

// StdinPath is the path that names standard input.
const StdinPath = "-"

// StdinName names standard input in positions, messages and History.Source.
const StdinName = "<stdin>"

// headSize is how many first bytes detection looks at, in a file and in a
// stream alike, so that both detect the same format.
const headSize = 512

// Read reads the history at path: a file, a directory (Cobra or Viper logs,
// or a dbcop history.bincode), "-" for standard input, or any other path that is
// neither a regular file nor a directory (a pipe, a FIFO, /dev/stdin,
// /dev/fd/N, a character device), which is read as a stream.
func Read(path string, opt Options) (*history.History, error) {
	if path == StdinPath {
		in := opt.Stdin
		if in == nil {
			in = os.Stdin
		}
		return ReadStream(in, StdinName, opt)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() && !st.IsDir() {
		// Opened once and read once: a second open would miss what the
		// first read took from a pipe, and block on a FIFO whose writer
		// has finished.
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return ReadStream(f, path, opt)
	}
	format := opt.Format
	if st.Mode().IsRegular() && format != "dbcop" && format != "cobra" {
		// A byte-order mark is refused, or skipped with --lenient, in one
		// place for every text format: ReadStream's.
		if head, err := readHead(path, len(bom)); err == nil && string(head) == bom {
			f, err := os.Open(path)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			return ReadStream(f, path, opt)
		}
	}
	if format == "" || format == "auto" {
		f, err := Detect(path)
		if err != nil {
			return nil, err
		}
		format = f
	}
	switch format {
	case "jsonl":
		return jsonl.Read(path, jsonl.Options{Lenient: opt.Lenient})
	case "dbcop":
		return dbcop.Read(path, dbcop.Options{Lenient: opt.Lenient})
	case "cobra":
		fl, err := cobraFlavour(opt)
		if err != nil {
			return nil, err
		}
		return cobra.Read(path, cobra.Options{Lenient: opt.Lenient, Flavour: fl})
	case "text":
		return text.Read(path, text.Options{Lenient: opt.Lenient})
	case "awdit":
		return awdit.Read(path, awdit.Options{Lenient: opt.Lenient})
	case "elle":
		return elle.Read(path, elle.Options{Lenient: opt.Lenient})
	case "viper":
		return viper.Read(path, viper.Options{Lenient: opt.Lenient})
	}
	return nil, unknownFormat(format)
}

// ReadStream reads a history from r, which is read once, from its current
// position to its end; name is used in positions and messages, and its
// extension counts for detection as a file's does. The first bytes that
// detection looks at are read through the same buffer the reader then
// reads, so none is lost.
func ReadStream(r io.Reader, name string, opt Options) (*history.History, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	format := opt.Format
	head, err := br.Peek(headSize)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if format == "" || format == "auto" {
		if format, err = detectFile(name, head); err != nil && !(opt.Lenient && errors.Is(err, errBOM)) {
			return nil, err
		} else if err != nil {
			format, err = detectFile(name, head[len(bom):])
			if err != nil {
				return nil, err
			}
		}
	}
	if string(head[:min(len(head), len(bom))]) == bom && format != "dbcop" && format != "cobra" {
		if !opt.Lenient {
			return nil, bomError(name, format)
		}
		br.Discard(len(bom))
		h, err := readStream(br, name, format, opt)
		if h != nil {
			h.Warnings = append([]history.Warning{{Pos: history.Pos{File: name, Line: 1}, Msg: "byte-order mark skipped"}}, h.Warnings...)
		}
		return h, err
	}
	return readStream(br, name, format, opt)
}

// bom is the UTF-8 byte-order mark, which some Windows tools put first.
const bom = "\ufeff"

// errBOM is wrapped by the error for a byte-order mark.
var errBOM = errors.New("a UTF-8 byte-order mark (EF BB BF) at the start")

func bomError(name, format string) error {
	return fmt.Errorf("%s:1: column 1: %w of a %s history; hyperiso reads UTF-8 text without one (remove it, or --lenient skips it)", name, errBOM, format)
}

func readStream(br *bufio.Reader, name, format string, opt Options) (*history.History, error) {
	switch format {
	case "jsonl":
		return jsonl.Parse(br, name, jsonl.Options{Lenient: opt.Lenient})
	case "dbcop":
		// Buffered whole: with its size known the reader refuses a length
		// prefix larger than the rest of the input before allocating, and
		// says so as it does for a file.
		data, err := io.ReadAll(br)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return dbcop.Parse(bytes.NewReader(data), name, int64(len(data)), dbcop.Options{Lenient: opt.Lenient})
	case "cobra":
		if _, err := cobraFlavour(opt); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: a Cobra history is a directory of T<n>.log files and cannot be read from a stream", name)
	case "text":
		return text.Parse(br, name, text.Options{Lenient: opt.Lenient})
	case "awdit":
		return awdit.Parse(br, name, awdit.Options{Lenient: opt.Lenient})
	case "elle":
		return elle.Parse(br, name, elle.Options{Lenient: opt.Lenient})
	case "viper":
		// One log: a history of one session.
		return viper.Parse(br, name, viper.Options{Lenient: opt.Lenient})
	}
	return nil, unknownFormat(format)
}

func cobraFlavour(opt Options) (cobra.Flavour, error) {
	if opt.CobraFlavour == "" {
		return cobra.Auto, nil
	}
	fl, ok := cobra.ParseFlavour(opt.CobraFlavour)
	if !ok {
		return fl, fmt.Errorf("unknown Cobra flavour %q (want auto, unique or universal)", opt.CobraFlavour)
	}
	return fl, nil
}

func unknownFormat(format string) error {
	return fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(Names, ", "))
}

// ErrCannotHold is wrapped by a writer's refusal of a history its format
// cannot hold; the message names what the format lacks.
var ErrCannotHold = express.ErrCannotHold

// ErrUnrecognised is wrapped by Detect's error when nothing matches.
var ErrUnrecognised = errors.New("unrecognised history format")

// Detect names the format of path from its shape and first bytes. A path
// that is neither a regular file nor a directory is refused: detecting a
// stream's format consumes its first bytes, which Read hands on instead.
func Detect(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if st.IsDir() {
		return detectDir(path)
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s: not a regular file (%s): its format can only be detected while reading it (formats.Read)", path, st.Mode().Type())
	}
	head, err := readHead(path, headSize)
	if err != nil {
		return "", err
	}
	return detectFile(path, head)
}

// detectFile names the format of a file or stream from its name and head.
func detectFile(name string, head []byte) (string, error) {
	switch ext := strings.ToLower(filepath.Ext(name)); ext {
	case ".bincode":
		return "dbcop", nil
	case ".jsonl", ".ndjson":
		return "jsonl", nil
	case ".edn":
		return "elle", nil
	}
	return detectContent(name, head)
}

func detectDir(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var logs []string
	for _, e := range entries {
		switch {
		case e.Name() == "history.bincode" && !e.IsDir():
			return "dbcop", nil
		case strings.HasSuffix(e.Name(), ".log"):
			// Checked before the head of one is read: a FIFO would block,
			// and an entry the reader cannot read is an error, not a skip.
			if err := cobra.CheckLogFile(filepath.Join(dir, e.Name())); err != nil {
				return "", err
			}
			logs = append(logs, e.Name())
		}
	}
	if len(logs) > 0 {
		sort.Strings(logs)
		// The first log that is not empty decides (a session without
		// transactions leaves an empty one in either format).
		for _, l := range logs {
			head, err := readHead(filepath.Join(dir, l), 8)
			if err != nil {
				return "", err
			}
			if len(head) == 0 {
				continue
			}
			// JSON lines (after a byte-order mark, which the Viper reader
			// then refuses with its position): Viper's logs, not Cobra's
			// binary records, whose first byte is a record letter.
			if t := bytes.TrimLeft(bytes.TrimPrefix(head, []byte(bom)), " \t\r\n"); len(t) > 0 && t[0] == '{' {
				return "viper", nil
			}
			return "cobra", nil
		}
		return "cobra", nil
	}
	return "", fmt.Errorf("%s: a directory with neither history.bincode nor Cobra or Viper *.log files: %w", dir, ErrUnrecognised)
}

// detectContent recognises text formats by their first non-blank line, and
// dbcop by its header shape (five u64 then a short length-prefixed string).
func detectContent(path string, head []byte) (string, error) {
	if len(head) == 0 {
		return "", fmt.Errorf("%s: empty file: %w", path, ErrUnrecognised)
	}
	if bytes.HasPrefix(head, []byte(bom)) && !dbcopShaped(head) {
		if f, err := detectContent(path, head[len(bom):]); err == nil {
			return "", bomError(path, f)
		}
		return "", fmt.Errorf("%s:1: column 1: %w, before text that is no known history format: %w (give --format)", path, errBOM, ErrUnrecognised)
	}
	line, lineNo := firstLine(head)
	switch {
	case strings.HasPrefix(line, "r(") || strings.HasPrefix(line, "w("):
		return "text", nil
	case (strings.HasPrefix(line, "{") || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";")) && strings.Contains(string(head), ":type"):
		return "elle", nil
	case strings.HasPrefix(line, "{") && elleJSONType.MatchString(line) && !nativeJSONL.MatchString(line):
		return "elle", nil
	case viperLine.MatchString(line):
		return "viper", nil
	case strings.TrimSpace(line) == "{":
		// A JSON document over several lines: no history format is one,
		// and JSON Lines would fail on its first line with a message about
		// a field name.
		return "", fmt.Errorf("%s:%d: a JSON document written over several lines, which is no history format (JSON Lines has one object per line); a workload for hyperiso robust or allocate? %w (give --format)", path, lineNo, ErrUnrecognised)
	case strings.HasPrefix(line, "{"):
		return "jsonl", nil
	case (strings.HasPrefix(line, "[") || strings.HasPrefix(line, "(")) && strings.Contains(string(head), ":type"):
		return "elle", nil
	case strings.HasPrefix(line, "[") && strings.Contains(string(head), "\"type\""):
		return "elle", nil
	case elle.DetectSyntax(head) == elle.VeriStrong && veriStrongRecord.MatchString(secondLine(head)):
		return "elle", nil
	case strings.HasPrefix(line, "r ") || strings.HasPrefix(line, "w ") || strings.HasPrefix(line, "=") || strings.HasPrefix(line, "-"):
		return "awdit", nil
	}
	if dbcopShaped(head) {
		return "dbcop", nil
	}
	if lineNo == 0 {
		return "", fmt.Errorf("%s: only blank lines in the first %d bytes: %w (give --format)", path, len(head), ErrUnrecognised)
	}
	return "", fmt.Errorf("%s:%d: %w: the first non-blank line begins %s, which starts no known format, and the file is not dbcop's binary shape (give --format)", path, lineNo, ErrUnrecognised, quoteHead(line))
}

// dbcopShaped: bytes 41 to 47 (from 0) are zero, the high bytes of the
// info string's length, which follows dbcop's 40-byte header.
func dbcopShaped(head []byte) bool {
	return len(head) >= 0x30 && head[0x29] == 0 && head[0x2a] == 0 && head[0x2b] == 0 && head[0x2c] == 0 &&
		head[0x2d] == 0 && head[0x2e] == 0 && head[0x2f] == 0
}

// quoteHead quotes the start of a line for a message, escaping what is
// not printable.
func quoteHead(line string) string {
	if len(line) > 40 {
		line = line[:40] + "..."
	}
	return strconv.QuoteToASCII(line)
}

// elleJSONType recognises an operation of elle-cli's JSON rendering
// (docs/formats.md), nativeJSONL the fields that only hyperiso's JSONL lines
// have (one of which every such line has).
var (
	viperLine    = regexp.MustCompile(`^\{\s*"(value|isInitial)"\s*:`)
	elleJSONType = regexp.MustCompile(`"type"\s*:\s*"(invoke|ok|fail|info)"`)
	nativeJSONL  = regexp.MustCompile(`"(hyperiso|ops|aborted_writes)"\s*:`)
)

// veriStrongRecord is a record of VeriStrong's elle-list-append text
// (docs/formats.md), after its first line, the record count.
var veriStrongRecord = regexp.MustCompile(`^-?\d+\s+-?\d+\s+[RA]\s+-?\d+`)

// secondLine returns the second non-blank line of head.
func secondLine(head []byte) string {
	n := 0
	for _, l := range bytes.Split(head, []byte("\n")) {
		if s := strings.TrimSpace(string(l)); s != "" {
			if n++; n == 2 {
				return s
			}
		}
	}
	return ""
}

// firstLine returns the first non-blank line of head and its number (0 if
// there is none).
func firstLine(head []byte) (string, int) {
	for i, l := range bytes.Split(head, []byte("\n")) {
		if s := strings.TrimSpace(string(l)); s != "" {
			return s, i + 1
		}
	}
	return "", 0
}

func readHead(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, n)
	m, err := io.ReadFull(bufio.NewReader(f), buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf[:m], nil
}

// InputSize returns how many bytes reading path will take, for a progress
// display: a regular file's size, the sum of a directory's regular files
// (Cobra and Viper logs, a dbcop history.bincode), standard input's size
// when it is redirected from a file; 0 when it is not known (a pipe, a
// terminal).
func InputSize(path string, stdin io.Reader) int64 {
	if path == StdinPath {
		return max(lineio.SizeOf(stdin), 0)
	}
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return 0
	case st.Mode().IsRegular():
		return st.Size()
	case !st.IsDir():
		return 0
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return 0
	}
	var total int64
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			total += info.Size()
		}
	}
	return total
}
