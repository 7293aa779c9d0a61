package mariadb_test

import (
	"testing"

	"github.com/hyperiso/hyperiso/collect/internal/dbtest"
)

// TestKillConns: dbtest.KillConns against this server.
func TestKillConns(t *testing.T) { dbtest.KillConns(t, open(t)) }

// TestKillConnsAppend: dbtest.KillConnsAppend against this server.
func TestKillConnsAppend(t *testing.T) { dbtest.KillConnsAppend(t, open(t)) }

// TestNetFaults: dbtest.NetFaults against this server, through the proxy.
func TestNetFaults(t *testing.T) { dbtest.NetFaults(t, open(t)) }
