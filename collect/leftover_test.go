package collect_test

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/collect"
)

// deadPID returns the id of a process that ran and is gone.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	require.False(t, collect.Alive(cmd.Process.Pid))
	return cmd.Process.Pid
}

func TestClassifyLeftovers(t *testing.T) {
	dead := deadPID(t)
	l, ok := collect.ClassifyTable(collect.TableNameOf(dead))
	require.True(t, ok)
	require.True(t, l.Orphan, "its process is gone")
	require.Equal(t, dead, l.PID)

	l, ok = collect.ClassifyTable(collect.TableName())
	require.True(t, ok)
	require.False(t, l.Orphan, "this process runs")
	require.Contains(t, l.String(), "still runs")

	other := collect.TableNameOf(dead)
	parts := strings.Split(other, "_")
	parts[2] = "00000000"
	if strings.Join(parts, "_") == other {
		parts[2] = "00000001"
	}
	l, ok = collect.ClassifyTable(strings.Join(parts, "_"))
	require.True(t, ok)
	require.False(t, l.Orphan, "another host's process may run")

	l, ok = collect.ClassifyTable(collect.KeptTableName())
	require.True(t, ok)
	require.False(t, l.Orphan, "kept tables stay")
	l, ok = collect.ClassifyTable("hyperiso_20260101_120000_0123abcd")
	require.True(t, ok)
	require.False(t, l.Orphan, "an older run's owner is unknown")
	_, ok = collect.ClassifyTable("hyperiso_test_schema")
	require.False(t, ok)

	l, ok = collect.ClassifyDir("hyperiso-etcd-", "hyperiso-etcd-p"+itoa(dead)+"-12345")
	require.True(t, ok)
	require.True(t, l.Orphan)
	l, ok = collect.ClassifyDir("hyperiso-etcd-", "hyperiso-etcd-p"+itoa(os.Getpid())+"-12345")
	require.True(t, ok)
	require.False(t, l.Orphan)
}

func itoa(n int) string { return strconv.Itoa(n) }
