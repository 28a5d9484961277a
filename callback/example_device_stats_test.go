//go:build unix

package callback_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
)

// DeviceStatsMonitor logs the process's CPU time and the Go runtime's
// memory at the end of each training epoch, under "device_stats/". The
// values depend on the machine and the moment (num_gc is often still 0);
// the names do not (the CPU times need a Unix system).
func ExampleDeviceStatsMonitor() {
	stats := callback.NewDeviceStatsMonitor(callback.DeviceStatsMonitorConfig{})
	trainer := exFit(volt.Config{
		MaxEpochs:            1,
		DisableCheckpointing: true,
		Callbacks:            []volt.Callback{stats},
	}, exLine{LR: 0.05}, exData())
	metrics := trainer.CallbackMetrics()
	for _, name := range slices.Sorted(maps.Keys(metrics)) {
		if strings.HasPrefix(name, "device_stats/") {
			fmt.Printf("%s >= 0: %t\n", name, metrics[name] >= 0)
		}
	}
	// Output:
	// device_stats/cpu_system_seconds >= 0: true
	// device_stats/cpu_user_seconds >= 0: true
	// device_stats/cpu_utilization >= 0: true
	// device_stats/goroutines >= 0: true
	// device_stats/heap_alloc_mb >= 0: true
	// device_stats/num_gc >= 0: true
	// device_stats/sys_mb >= 0: true
}
