package collect

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
)

func TestParseTypeLevels(t *testing.T) {
	known := []string{"NewOrder", "Payment", "Delivery"}
	tl, err := ParseTypeLevels(" neworder = ser , PAYMENT=rr,Delivery=si", known)
	require.NoError(t, err)
	require.Equal(t, []string{"NewOrder", "Payment", "Delivery"}, tl.Types)
	require.Equal(t, "NewOrder=ser,Payment=rr,Delivery=si", tl.String())
	require.Equal(t, Serializable, tl.Entries[0].Iso)
	require.Equal(t, RepeatableRead, tl.Entries[1].Iso)
	require.Equal(t, history.LevelNone, tl.Entries[1].Level, "rr records no level")
	require.Equal(t, Snapshot, tl.Entries[2].Iso)
	require.Equal(t, 1, tl.index("Payment"))
	require.Equal(t, -1, tl.index(""))
	for spec, msg := range map[string]string{
		"":                          "empty: want Type=level",
		"NewOrder":                  `"NewOrder": want Type=level`,
		"Order=ser":                 `unknown transaction type "Order" (want NewOrder, Payment, Delivery)`,
		"NewOrder=ser,neworder=si":  "NewOrder named twice",
		"Payment=strict-ser":        "Payment: strict-ser is an order over the whole history",
		"Payment=xx":                `Payment: unknown level "xx"`,
		"NewOrder=ser,,Payment=ser": `"": want Type=level`,
	} {
		_, err := ParseTypeLevels(spec, known)
		require.ErrorContains(t, err, msg, spec)
	}
}

// TestClassifyAppTables: an application's tables, named after the run's
// with a suffix, are swept like the run's own; other suffixes are not
// the runs'.
func TestClassifyAppTables(t *testing.T) {
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	dead := cmd.Process.Pid
	l, ok := ClassifyTable(TableNameOf(dead) + "_neword")
	require.True(t, ok)
	require.True(t, l.Orphan)
	require.Equal(t, dead, l.PID)
	l, ok = ClassifyTable(KeptTableName() + "_cust")
	require.True(t, ok)
	require.Contains(t, l.Note, "kept")
	for _, name := range []string{TableNameOf(dead) + "_", TableNameOf(dead) + "_Dist", TableNameOf(dead) + "_d1", TableNameOf(dead) + "x"} {
		_, ok = ClassifyTable(name)
		require.False(t, ok, name)
	}
}
