package volt

import (
	"encoding/json"
	"math"
	"testing"
)

func TestJSONFloatRoundTrip(t *testing.T) {
	for _, c := range []struct {
		v    float64
		json string
	}{
		{0, `0`}, {1.5, `1.5`}, {-2e-300, `-2e-300`}, {math.MaxFloat64, `1.7976931348623157e+308`},
		{math.NaN(), `"NaN"`}, {math.Inf(1), `"+Inf"`}, {math.Inf(-1), `"-Inf"`},
	} {
		b, err := json.Marshal(jsonFloat(c.v))
		if err != nil || string(b) != c.json {
			t.Errorf("Marshal(%v) = %s, %v; want %s", c.v, b, err, c.json)
		}
		var back jsonFloat
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("Unmarshal(%s): %v", b, err)
		}
		if got := float64(back); got != c.v && !(math.IsNaN(got) && math.IsNaN(c.v)) {
			t.Errorf("round trip of %v gave %v", c.v, got)
		}
	}
	var f jsonFloat
	if err := json.Unmarshal([]byte(`"Infinity"`), &f); err == nil {
		t.Error(`"Infinity" accepted; want an error naming the valid spellings`)
	}
}
