package callback

import (
	"runtime"
	"time"

	"github.com/voltml/volt"
)

// DeviceStatsMonitor logs, at the end of each training epoch, the process's
// CPU time and the Go runtime's memory under "device_stats/":
//
//	cpu_user_seconds, cpu_system_seconds  CPU time used by the process so far
//	cpu_utilization                       CPU time over wall time during the epoch (1 = one core busy)
//	heap_alloc_mb                         live heap (runtime.MemStats.HeapAlloc)
//	sys_mb                                memory obtained from the OS (MemStats.Sys)
//	num_gc                                garbage collections so far
//	goroutines                            goroutines running
//
// Memory held by the accelerator's runtime outside the Go heap (XLA
// buffers, for instance) is not included. CPU times need a Unix system;
// elsewhere they are not logged.
type DeviceStatsMonitor struct {
	configured[DeviceStatsMonitorConfig]
	wallStart time.Time
	cpuStart  time.Duration
}

// DeviceStatsMonitorConfig configures DeviceStatsMonitor.
type DeviceStatsMonitorConfig struct {
	// Now is the clock for cpu_utilization; nil means time.Now.
	Now func() time.Time
}

// NewDeviceStatsMonitor returns the callback (every configuration is valid).
// A bad field is no error here: NewTrainer reports it, naming the field, as
// does Validate.
func NewDeviceStatsMonitor(cfg DeviceStatsMonitorConfig) *DeviceStatsMonitor {
	return newCallback(cfg, newDeviceStatsMonitor)
}

// newDeviceStatsMonitor builds the callback for cfg, filling in the defaults
// its zero values stand for, or reports its bad fields.
func newDeviceStatsMonitor(cfg *DeviceStatsMonitorConfig) (*DeviceStatsMonitor, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &DeviceStatsMonitor{}, nil
}

// OnTrainEpochStart notes the wall and CPU time at the epoch's start.
func (m *DeviceStatsMonitor) OnTrainEpochStart(t *volt.Trainer) error {
	m.wallStart = m.cfg.Now()
	if user, sys, ok := cpuTimes(); ok {
		m.cpuStart = user + sys
	}
	return nil
}

// OnTrainEpochEnd logs the statistics.
func (m *DeviceStatsMonitor) OnTrainEpochEnd(t *volt.Trainer) error {
	if user, sys, ok := cpuTimes(); ok {
		t.Log("device_stats/cpu_user_seconds", user.Seconds())
		t.Log("device_stats/cpu_system_seconds", sys.Seconds())
		if wall := m.cfg.Now().Sub(m.wallStart); wall > 0 {
			t.Log("device_stats/cpu_utilization", (user+sys-m.cpuStart).Seconds()/wall.Seconds())
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Log("device_stats/heap_alloc_mb", float64(ms.HeapAlloc)/1e6)
	t.Log("device_stats/sys_mb", float64(ms.Sys)/1e6)
	t.Log("device_stats/num_gc", float64(ms.NumGC))
	t.Log("device_stats/goroutines", float64(runtime.NumGoroutine()))
	return nil
}

// Interface guards.
var (
	_ volt.OnTrainEpochStart = (*DeviceStatsMonitor)(nil)
	_ volt.OnTrainEpochEnd   = (*DeviceStatsMonitor)(nil)
)
