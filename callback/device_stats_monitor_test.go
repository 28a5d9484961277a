package callback_test

import (
	"testing"
	"time"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
)

func TestDeviceStatsMonitor(t *testing.T) {
	clock := newFakeClock()
	m := callback.NewDeviceStatsMonitor(callback.DeviceStatsMonitorConfig{Now: clock.Now})
	log := &memLogger{}
	if _, err := fit(t, logged(volt.Config{MaxEpochs: 2}, log), &boring{}, boringData(), ticker{clock, time.Second}, m); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		key      string
		positive bool
	}{
		{"device_stats/cpu_user_seconds", true},
		{"device_stats/cpu_system_seconds", false},
		{"device_stats/cpu_utilization", false},
		{"device_stats/heap_alloc_mb", true},
		{"device_stats/sys_mb", true},
		{"device_stats/num_gc", false},
		{"device_stats/goroutines", true},
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			s := log.series(tc.key)
			if len(s) != 2 {
				t.Fatalf("logged %d times, want once per epoch (2): %v", len(s), s)
			}
			for _, v := range s {
				if v < 0 || (tc.positive && v == 0) {
					t.Errorf("value %v", v)
				}
			}
		})
	}
}
