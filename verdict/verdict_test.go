package verdict

import (
	"encoding/json"
	"testing"
)

// TestJSONNames: reports carry the names, and read them back; a name that
// is no verdict is refused rather than read as none.
func TestJSONNames(t *testing.T) {
	for v, want := range map[Verdict]string{0: `""`, Satisfied: `"satisfied"`, Violated: `"violated"`, Unknown: `"unknown"`} {
		b, err := json.Marshal(v)
		if err != nil || string(b) != want {
			t.Fatalf("%d: %s, %v; want %s", v, b, err, want)
		}
		var back Verdict
		if err := json.Unmarshal(b, &back); err != nil || back != v {
			t.Fatalf("%s read back as %d, %v", b, back, err)
		}
	}
	var v Verdict
	if err := json.Unmarshal([]byte(`"sat"`), &v); err == nil {
		t.Fatal(`"sat" read as a verdict`)
	}
	if _, err := json.Marshal(Verdict(9)); err == nil {
		t.Fatal("Verdict(9) written")
	}
}
