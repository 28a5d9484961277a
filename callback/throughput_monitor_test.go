package callback_test

import (
	"testing"
	"time"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/data"
)

func TestThroughputMonitor(t *testing.T) {
	tests := []struct {
		name    string
		perStep time.Duration
		itemsFn func(*data.Batch) int
		want    map[string]float64
	}{
		// 4 batches of 16 samples, 8 features each.
		{"half a second per batch", 500 * time.Millisecond, nil,
			map[string]float64{"throughput/batches_per_sec": 2, "throughput/samples_per_sec": 32}},
		{"items", 250 * time.Millisecond, func(b *data.Batch) int { return 8 * b.Size },
			map[string]float64{"throughput/batches_per_sec": 4, "throughput/samples_per_sec": 64, "throughput/items_per_sec": 512}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			tm := callback.NewThroughputMonitor(callback.ThroughputMonitorConfig{ItemsFn: tc.itemsFn, Now: clock.Now})
			log := &memLogger{}
			tr, err := fit(t, logged(volt.Config{MaxEpochs: 2}, log), &boring{}, boringData(), ticker{clock, tc.perStep}, tm)
			if err != nil {
				t.Fatal(err)
			}
			got := tr.CallbackMetrics()
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v", k, got[k], v)
				}
				if s := log.series(k); len(s) != 2 || s[0] != v || s[1] != v {
					t.Errorf("logged %s = %v, want two epochs of %v", k, s, v)
				}
			}
			if _, ok := got["throughput/items_per_sec"]; ok != (tc.itemsFn != nil) {
				t.Errorf("items_per_sec logged = %v, want %v", ok, tc.itemsFn != nil)
			}
		})
	}
}
