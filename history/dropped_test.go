package history

import "testing"

func TestDroppedString(t *testing.T) {
	for _, c := range []struct {
		d    Dropped
		want string
	}{
		{Dropped{}, "nothing"},
		{Dropped{Txns: 1}, "1 transaction"},
		{Dropped{Txns: 1, Ops: 3}, "1 transaction and 3 operations"},
		{Dropped{Ops: 1, Other: 2}, "1 operation and 2 other input items"},
		{Dropped{Txns: 2, Ops: 1, Other: 1}, "2 transactions, 1 operation and 1 other input item"},
	} {
		if got := c.d.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.d, got, c.want)
		}
		if c.d.Any() != (c.want != "nothing") {
			t.Errorf("%+v: Any() is %v", c.d, c.d.Any())
		}
	}
	b := NewBuilder("x", "test")
	b.Drop(Dropped{Txns: 1, Ops: 2})
	b.Drop(Dropped{Ops: 1, Other: 1})
	if got := b.Finish().Dropped; got != (Dropped{Txns: 1, Ops: 3, Other: 1}) {
		t.Errorf("Drop adds up to %+v", got)
	}
}
