package tqdm

import (
	"encoding/json"
	"os"
	"testing"
)

// TestMeterMatchesTqdm formats the seeded cases of
// testdata/lightning/progress_bar/meter_cases.json (written by tqdm itself
// with Lightning's bar format and number format, meter_cases.py) and
// compares the lines.
func TestMeterMatchesTqdm(t *testing.T) {
	b, err := os.ReadFile("../../testdata/lightning/progress_bar/meter_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []struct {
			N, Total int
			Elapsed  float64
			Ncols    int
			Desc     string
			VNum     *int64 `json:"v_num"`
			Values   [][2]any
			Line     string
		}
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) < 100 {
		t.Fatalf("%d cases, want the file's 300", len(f.Cases))
	}
	for i, c := range f.Cases {
		var items []Item
		if c.VNum != nil {
			items = append(items, Item{"v_num", Int(*c.VNum)})
		}
		for _, v := range c.Values {
			items = append(items, Item{v[0].(string), Num(v[1].(float64))})
		}
		if got := Meter(c.Desc, c.N, c.Total, c.Elapsed, items, c.Ncols); got != c.Line {
			t.Errorf("case %d (%+v):\n got %q\nwant %q", i, c, got, c.Line)
		}
	}
}
