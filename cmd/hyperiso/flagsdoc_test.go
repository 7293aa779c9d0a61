package main

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

// TestEveryFlagDocumented: every flag of every command is explained in
// README.md or in a page under docs/ (the README documents the command line
// flag for flag; robust and allocate have their page).
func TestEveryFlagDocumented(t *testing.T) {
	var docs strings.Builder
	for _, p := range append([]string{"../../README.md"}, mustGlob(t, "../../docs/*.md")...) {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		docs.Write(b)
	}
	text := docs.String()
	code := 0
	root := newRoot(io.Discard, &code)
	var missing []string
	seen := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		check := func(f *pflag.Flag) {
			if f.Hidden || f.Name == "help" {
				return
			}
			seen++
			if !regexp.MustCompile(`--` + regexp.QuoteMeta(f.Name) + `\b`).MatchString(text) {
				missing = append(missing, c.CommandPath()+" --"+f.Name)
			}
		}
		c.LocalFlags().VisitAll(check)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	require.Greater(t, seen, 50, "too few flags seen for the test to mean anything")
	require.Empty(t, missing, "flags no page documents")
}

func mustGlob(t *testing.T, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	require.NoError(t, err)
	return m
}
