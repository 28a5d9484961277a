package tuner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSearchBatchSizeMatchesLightning replays testdata/batch_size.json
// (gen_batch_size.py: Lightning's own search with trials that fail above a
// limit): the same sizes tried, in order, and the same result.
func TestSearchBatchSizeMatchesLightning(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "batch_size.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Cases []struct {
			Mode       string `json:"mode"`
			Limit      int    `json:"limit"`
			DatasetLen *int   `json:"dataset_len"`
			InitVal    int    `json:"init_val"`
			MaxTrials  int    `json:"max_trials"`
			Tried      []int  `json:"tried"`
			Result     int    `json:"result"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("testdata/batch_size.json: %v", err)
	}
	if len(g.Cases) == 0 {
		t.Fatal("testdata/batch_size.json has no cases")
	}
	for _, c := range g.Cases {
		n := "iterable"
		if c.DatasetLen != nil {
			n = fmt.Sprint(*c.DatasetLen)
		}
		t.Run(fmt.Sprintf("%s/limit=%d/len=%s/init=%d/trials=%d", c.Mode, c.Limit, n, c.InitVal, c.MaxTrials), func(t *testing.T) {
			covers := func(size int) bool { return c.DatasetLen != nil && size >= *c.DatasetLen }
			try := func(size int) (bool, error) { return size <= c.Limit, nil }
			got, tried, err := searchBatchSize(c.Mode, c.InitVal, c.MaxTrials, covers, try)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.Result || !slices.Equal(tried, c.Tried) {
				t.Fatalf("result %d after trying %v; Lightning %d after %v", got, tried, c.Result, c.Tried)
			}
		})
	}
}
