// Package shared locates the project's shared folder (datasets, papers,
// specifications) for tests: $HYPERISO_SHARED, or ../shared beside the module
// root. Outside CI a missing folder skips the test; under CI it fails it.
package shared

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the shared folder, or "" when it cannot be found.
func Dir() string {
	if d := os.Getenv("HYPERISO_SHARED"); d != "" {
		return d
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			s := filepath.Join(filepath.Dir(d), "shared")
			if st, err := os.Stat(s); err == nil && st.IsDir() {
				return s
			}
			return ""
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// Datasets returns the datasets folder, skipping (or, under CI, failing)
// the test when it is absent.
func Datasets(t testing.TB) string {
	t.Helper()
	d := Dir()
	if d == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("shared/ not found beside the repository (set HYPERISO_SHARED)")
		}
		t.Skip("shared/ not found beside the repository; set HYPERISO_SHARED to run this test")
	}
	return filepath.Join(d, "datasets")
}

// Path joins elements onto the datasets folder.
func Path(t testing.TB, elem ...string) string {
	t.Helper()
	return filepath.Join(append([]string{Datasets(t)}, elem...)...)
}
