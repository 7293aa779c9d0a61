// Package etcddirs finds the data directories that embedded etcd clusters
// leave in the temporary directory. It imports no etcd package, so that a
// hyperiso built without etcd (-tags noetcd) still cleans up after a full
// build's killed runs.
package etcddirs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hyperiso/hyperiso/collect"
)

// Prefix begins the name of an embedded cluster's data directory, in the
// temporary directory: Prefix + "p" + PID + "-" + random digits.
const Prefix = "hyperiso-etcd-"

// Sweep lists the data directories of embedded clusters in the temporary
// directory and removes, if remove, those whose process is gone (a killed
// run's: a few hundred megabytes each).
func Sweep(remove bool) ([]collect.Leftover, error) {
	tmp := os.TempDir()
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return nil, fmt.Errorf("etcd: %w", err)
	}
	var left []collect.Leftover
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), Prefix) {
			continue
		}
		l, ok := collect.ClassifyDir(Prefix, e.Name())
		if !ok {
			continue
		}
		l.Name = filepath.Join(tmp, e.Name())
		if l.Orphan && remove {
			if err := os.RemoveAll(l.Name); err != nil {
				l.Note = "removing it: " + err.Error()
			} else {
				l.Removed = true
			}
		}
		left = append(left, l)
	}
	return left, nil
}
