package callback

import (
	"time"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
)

// ThroughputMonitor logs the training throughput of each epoch:
// throughput/batches_per_sec, throughput/samples_per_sec (from the batch
// sizes) and, with ItemsFn, throughput/items_per_sec (tokens, pixels, …).
//
// The time counted runs from OnTrainEpochStart to the end of the epoch's last
// training batch, so the epoch's validation is not included. Values are
// logged with Trainer.Log at OnTrainEpochEnd, as epoch values.
type ThroughputMonitor struct {
	configured[ThroughputMonitorConfig]
	start, last      time.Time
	batches, samples int64
	items            int64
}

// ThroughputMonitorConfig configures ThroughputMonitor.
type ThroughputMonitorConfig struct {
	// ItemsFn, when set, counts the items of a batch (e.g. its tokens).
	ItemsFn func(b *data.Batch) int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// NewThroughputMonitor returns the callback (every configuration is valid).
// A bad field is no error here: NewTrainer reports it, naming the field, as
// does Validate.
func NewThroughputMonitor(cfg ThroughputMonitorConfig) *ThroughputMonitor {
	return newCallback(cfg, newThroughputMonitor)
}

// newThroughputMonitor builds the callback for cfg, filling in the defaults
// its zero values stand for, or reports its bad fields.
func newThroughputMonitor(cfg *ThroughputMonitorConfig) (*ThroughputMonitor, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &ThroughputMonitor{}, nil
}

// OnTrainEpochStart starts the epoch's clock and counts.
func (m *ThroughputMonitor) OnTrainEpochStart(t *volt.Trainer) error {
	m.start = m.cfg.Now()
	m.last = m.start
	m.batches, m.samples, m.items = 0, 0, 0
	return nil
}

// OnTrainBatchEnd counts the batch.
func (m *ThroughputMonitor) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, b *data.Batch, _ int) error {
	m.last = m.cfg.Now()
	m.batches++
	m.samples += int64(b.Size)
	if m.cfg.ItemsFn != nil {
		m.items += int64(m.cfg.ItemsFn(b))
	}
	return nil
}

// OnTrainEpochEnd logs the epoch's rates.
func (m *ThroughputMonitor) OnTrainEpochEnd(t *volt.Trainer) error {
	secs := m.last.Sub(m.start).Seconds()
	if m.batches == 0 || secs <= 0 {
		return nil
	}
	t.Log("throughput/batches_per_sec", float64(m.batches)/secs)
	t.Log("throughput/samples_per_sec", float64(m.samples)/secs)
	if m.cfg.ItemsFn != nil {
		t.Log("throughput/items_per_sec", float64(m.items)/secs)
	}
	return nil
}

// Interface guards.
var (
	_ volt.OnTrainEpochStart = (*ThroughputMonitor)(nil)
	_ volt.OnTrainBatchEnd   = (*ThroughputMonitor)(nil)
	_ volt.OnTrainEpochEnd   = (*ThroughputMonitor)(nil)
)
