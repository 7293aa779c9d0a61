package collect

import (
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
