package main

import (
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/collect/stores"
)

func TestVersionText(t *testing.T) {
	etcd := "etcd: included\n"
	if !stores.WithEtcd {
		etcd = "etcd: not included (built with -tags noetcd): collect --db etcd needs the full build\n"
	}
	bi := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/hyperiso/hyperiso", Version: "v0.0.0-20261128140858-1313856abcde+dirty"},
		Settings: []debug.BuildSetting{
			{Key: "-tags", Value: "noetcd"},
			{Key: "GOARCH", Value: "arm64"},
			{Key: "GOOS", Value: "darwin"},
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "1313856abcdef0123456789abcdef0123456789a"},
			{Key: "vcs.time", Value: "2026-11-28T14:08:58Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	require.Equal(t, "hyperiso v0.0.0-20261128140858-1313856abcde+dirty\n"+
		"revision: 1313856abcdef0123456789abcdef0123456789a (2026-11-28T14:08:58Z), modified\n"+
		"go: go1.26.8 darwin/arm64\n"+
		"tags: noetcd\n"+etcd, versionText(bi, true))

	bi.Settings[len(bi.Settings)-1].Value = "false"
	require.Contains(t, versionText(bi, true), "(2026-11-28T14:08:58Z), clean\n")

	// go run, go test, -buildvcs=false: no stamp.
	bi = &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/hyperiso/hyperiso", Version: "(devel)"}}
	require.Equal(t, "hyperiso (devel)\nrevision: unknown\ngo: go1.26.8 "+runtime.GOOS+"/"+runtime.GOARCH+"\n"+etcd, versionText(bi, true))
	require.Equal(t, "hyperiso unknown\nrevision: unknown\ngo: "+runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH+"\n"+etcd, versionText(nil, false))
}

func TestVersionCommand(t *testing.T) {
	want := versionText(debug.ReadBuildInfo())
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, errs := runCLI(t, args...)
		require.Equal(t, exitSatisfied, code, errs)
		require.Equal(t, want, out, args)
		require.Empty(t, errs)
	}
	require.True(t, strings.HasPrefix(want, "hyperiso "), want)
	require.Contains(t, want, "go: "+runtime.Version())
	code, _, errs := runCLI(t, "version", "extra")
	require.Equal(t, exitBadInput, code)
	require.Contains(t, errs, "unknown command")
	// -v is left to the commands (a verbose flag), not taken by --version.
	code = 0
	f := newRoot(io.Discard, &code).Flags().Lookup("version")
	require.NotNil(t, f)
	require.Empty(t, f.Shorthand)
}

func TestCollectEtcdWithoutEtcd(t *testing.T) {
	if stores.WithEtcd {
		t.Skip("built with etcd: go test -tags noetcd tests its absence")
	}
	out := filepath.Join(t.TempDir(), "h.jsonl")
	for _, db := range []string{"etcd", "etcd?members=1", "etcd://127.0.0.1:2379"} {
		code, stdout, errs := runWithCollect(t, "collect", "--db", db, "-o", out)
		require.Equal(t, exitBadInput, code, stdout+errs)
		require.Contains(t, errs, "this hyperiso was built without etcd (-tags noetcd)")
		require.Contains(t, errs, "go build -trimpath -o hyperiso ./cmd/hyperiso")
		require.NoFileExists(t, out)
	}
}

// TestVersionOfReleaseBuild builds the release binary of README ("Building
// a release") from this checkout and asks it for its version: the go command
// stamps the commit when it can read the Git checkout.
func TestVersionOfReleaseBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	// go test puts its own go command first in PATH.
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	bin := filepath.Join(t.TempDir(), "hyperiso")
	// -buildvcs=auto overrides a GOFLAGS=-buildvcs=false; a Git worktree,
	// whose .git is a file, is not stamped either way.
	build := exec.Command(gocmd, "build", "-trimpath", "-buildvcs=auto", "-tags", "noetcd,noplot", "-o", bin, ".")
	b, err := build.CombinedOutput()
	require.NoError(t, err, string(b))
	b, err = exec.Command(bin, "version").CombinedOutput()
	require.NoError(t, err, string(b))
	out := string(b)
	require.True(t, strings.HasPrefix(out, "hyperiso "), out)
	require.Contains(t, out, "\ntags: noetcd,noplot\n")
	require.Contains(t, out, "\netcd: not included")
	if strings.Contains(out, "\nrevision: unknown\n") {
		t.Log("no commit stamped: not a Git checkout the go command reads")
	} else if head, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
		require.Contains(t, out, "\nrevision: "+strings.TrimSpace(string(head))+" (")
	}
	b, err = exec.Command(bin, "--version").CombinedOutput()
	require.NoError(t, err, string(b))
	require.Equal(t, out, string(b))
	b, err = exec.Command(bin, "collect", "--db", "etcd", "-o", filepath.Join(t.TempDir(), "h.jsonl")).CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(b), "built without etcd")
}
