// Package formats picks the reader for a history file or directory: by the
// --format the user named, or by recognising the path and its first bytes
// (FORMATS.md §0.4). The readers themselves live in one sub-package each.
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
	"strings"

	"github.com/hyperiso/hyperiso/formats/awdit"
	"github.com/hyperiso/hyperiso/formats/cobra"
	"github.com/hyperiso/hyperiso/formats/dbcop"
	"github.com/hyperiso/hyperiso/formats/elle"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/formats/text"
	"github.com/hyperiso/hyperiso/history"
)

// Names lists the formats accepted by Read, "auto" first.
var Names = []string{"auto", "jsonl", "dbcop", "cobra", "text", "awdit", "elle"}

// Options select and tune a reader.
type Options struct {
	// Format is one of Names; "" means auto.
	Format string
	// Lenient turns recoverable structural errors into warnings.
	Lenient bool
	// CobraFlavour is "auto", "unique" or "universal" (FORMATS.md §3.4).
	CobraFlavour string
}

// Read reads the history at path.
func Read(path string, opt Options) (*history.History, error) {
	format := opt.Format
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
		fl := cobra.Auto
		if opt.CobraFlavour != "" {
			var ok bool
			if fl, ok = cobra.ParseFlavour(opt.CobraFlavour); !ok {
				return nil, fmt.Errorf("unknown Cobra flavour %q (want auto, unique or universal)", opt.CobraFlavour)
			}
		}
		return cobra.Read(path, cobra.Options{Lenient: opt.Lenient, Flavour: fl})
	case "text":
		return text.Read(path, text.Options{Lenient: opt.Lenient})
	case "awdit":
		return awdit.Read(path, awdit.Options{Lenient: opt.Lenient})
	case "elle":
		return elle.Read(path, elle.Options{Lenient: opt.Lenient})
	}
	return nil, fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(Names, ", "))
}

// ErrUnrecognised is wrapped by Detect's error when nothing matches.
var ErrUnrecognised = errors.New("unrecognised history format")

// Detect names the format of path from its shape and first bytes.
func Detect(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if st.IsDir() {
		return detectDir(path)
	}
	head, err := readHead(path, 512)
	if err != nil {
		return "", err
	}
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".bincode":
		return "dbcop", nil
	case ".jsonl", ".ndjson":
		return "jsonl", nil
	case ".edn":
		return "elle", nil
	}
	return detectContent(path, head)
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
		case strings.HasSuffix(e.Name(), ".log") && !e.IsDir():
			logs = append(logs, e.Name())
		}
	}
	if len(logs) > 0 {
		sort.Strings(logs)
		head, err := readHead(filepath.Join(dir, logs[0]), 1)
		if err == nil && len(head) > 0 && head[0] == '{' {
			return "", fmt.Errorf("%s: %s holds JSON lines (a Viper log), not a Cobra log; %w", dir, logs[0], ErrUnrecognised)
		}
		return "cobra", nil
	}
	return "", fmt.Errorf("%s: a directory with neither history.bincode nor Cobra *.log files: %w", dir, ErrUnrecognised)
}

// detectContent recognises text formats by their first non-blank line, and
// dbcop by its header shape (five u64 then a short length-prefixed string).
func detectContent(path string, head []byte) (string, error) {
	if len(head) == 0 {
		return "", fmt.Errorf("%s: empty file: %w", path, ErrUnrecognised)
	}
	line := firstLine(head)
	switch {
	case strings.HasPrefix(line, "r(") || strings.HasPrefix(line, "w("):
		return "text", nil
	case (strings.HasPrefix(line, "{") || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";")) && strings.Contains(string(head), ":type"):
		return "elle", nil
	case strings.HasPrefix(line, "{") && elleJSONType.MatchString(line) && !nativeJSONL.MatchString(line):
		return "elle", nil
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
	if len(head) >= 0x30 && head[0x29] == 0 && head[0x2a] == 0 && head[0x2b] == 0 && head[0x2c] == 0 &&
		head[0x2d] == 0 && head[0x2e] == 0 && head[0x2f] == 0 {
		return "dbcop", nil
	}
	return "", fmt.Errorf("%s: %w (give --format)", path, ErrUnrecognised)
}

// elleJSONType recognises an operation of elle-cli's JSON rendering
// (FORMATS.md §5.9), nativeJSONL the fields that only hyperiso's JSONL lines
// have (one of which every such line has).
var (
	elleJSONType = regexp.MustCompile(`"type"\s*:\s*"(invoke|ok|fail|info)"`)
	nativeJSONL  = regexp.MustCompile(`"(hyperiso|ops|aborted_writes)"\s*:`)
)

// veriStrongRecord is a record of VeriStrong's elle-list-append text
// (FORMATS.md §6.1), after its first line, the record count.
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

func firstLine(head []byte) string {
	for _, l := range bytes.Split(head, []byte("\n")) {
		if s := strings.TrimSpace(string(l)); s != "" {
			return s
		}
	}
	return ""
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
