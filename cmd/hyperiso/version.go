package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/hyperiso/hyperiso/collect/stores"
)

// addVersion gives root a version command and a --version flag, which
// print the same text: versionText of this binary's build information, read
// only when asked for.
func addVersion(root *cobra.Command, stdout io.Writer) {
	registerVersionFunc()
	// Non-empty, for cobra to honour --version; the template prints the text.
	root.Version = "see the template"
	root.SetVersionTemplate("{{hyperisoVersion}}")
	// Declared here so that cobra does not also take -v for it.
	root.Flags().Bool("version", false, "print the version and build information")
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the version and build information",
		Long:  "Print the version and build information: the module version, the commit built and whether the tree had changes, the Go release, and whether collect --db etcd is in this build.",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := io.WriteString(stdout, buildVersion())
			return err
		},
	})
}

// buildVersion is versionText of this binary, computed once, on demand
// (reading the build information takes some 20µs, which every command would
// otherwise pay).
var buildVersion = sync.OnceValue(func() string { return versionText(debug.ReadBuildInfo()) })

// registerVersionFunc gives cobra's templates the function that prints
// buildVersion (cobra keeps them in one map for the process).
var registerVersionFunc = sync.OnceFunc(func() { cobra.AddTemplateFunc("hyperisoVersion", buildVersion) })

// versionText describes a build from its build information (ok false: none,
// as in a binary built without module support), one fact a line:
//
//	hyperiso v0.0.0-20261128140858-1313856abcde+dirty
//	revision: 1313856abcde… (2026-11-28T14:08:58Z), modified
//	go: go1.26.8 linux/amd64
//	etcd: included
//
// The module version is (devel) when the go command could not stamp one
// (go run, a test binary); the revision is unknown without version control
// information (-buildvcs=false, or built outside a Git checkout).
func versionText(bi *debug.BuildInfo, ok bool) string {
	version, goVersion := "unknown", runtime.Version()
	set := map[string]string{}
	if ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		if bi.GoVersion != "" {
			goVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			set[s.Key] = s.Value
		}
	}
	goos, goarch := runtime.GOOS, runtime.GOARCH
	if v := set["GOOS"]; v != "" {
		goos = v
	}
	if v := set["GOARCH"]; v != "" {
		goarch = v
	}
	revision := "unknown"
	if r := set["vcs.revision"]; r != "" {
		revision = r
		if t := set["vcs.time"]; t != "" {
			revision += " (" + t + ")"
		}
		switch set["vcs.modified"] {
		case "true":
			revision += ", modified"
		case "false":
			revision += ", clean"
		}
	}
	etcd := "included"
	if !stores.WithEtcd {
		etcd = "not included (built with -tags noetcd): collect --db etcd needs the full build"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "hyperiso %s\n", version)
	fmt.Fprintf(&b, "revision: %s\n", revision)
	fmt.Fprintf(&b, "go: %s %s/%s\n", goVersion, goos, goarch)
	if tags := set["-tags"]; tags != "" {
		fmt.Fprintf(&b, "tags: %s\n", tags)
	}
	fmt.Fprintf(&b, "etcd: %s\n", etcd)
	return b.String()
}
