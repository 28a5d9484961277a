package volt

import (
	"slices"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
)

// orderProbe records its name in OnFitStart and OnTrainEpochEnd.
type orderProbe struct {
	name string
	log  *[]string
}

func (p *orderProbe) Name() string                          { return p.name }
func (p *orderProbe) OnFitStart(*Trainer) error             { *p.log = append(*p.log, p.name); return nil }
func (p *orderProbe) OnTrainEpochEnd(*Trainer) error        { *p.log = append(*p.log, p.name); return nil }
func (p *orderProbe) TrainingStep(*Step, Batch) *graph.Node { return nil }

// checkpointProbe is a Checkpointer, monitorProbe a MetricMonitor.
type checkpointProbe struct{ orderProbe }
type monitorProbe struct{ orderProbe }

func (*checkpointProbe) ManagesCheckpoints() {}
func (*monitorProbe) MonitorsMetric()        {}

// TestHookOrderLikeLightning: Checkpointer callbacks come after the others
// (Lightning's _reorder_callbacks), and in OnTrainEpochEnd the monitoring
// callbacks run after the module (Lightning's fit loop), so that they see
// what it logs there.
func TestHookOrderLikeLightning(t *testing.T) {
	var log []string
	probe := func(name string) orderProbe { return orderProbe{name, &log} }
	ckpt, mon, plain := &checkpointProbe{probe("ckpt")}, &monitorProbe{probe("monitor")}, &orderProbe{"plain", &log}
	module := &orderProbe{"module", &log}
	tr := &Trainer{hooks: resolveHooks([]Callback{ckpt, mon, plain}, false, module, nil), run: &run{}}
	for _, tc := range []struct {
		hook hookID
		want []string
	}{
		{hookOnFitStart, []string{"monitor", "plain", "ckpt", "module"}},
		{hookOnTrainEpochEnd, []string{"plain", "module", "monitor", "ckpt"}},
	} {
		log = nil
		if err := tr.emit(tc.hook, hookArgs{}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(log, tc.want) {
			t.Errorf("%s: order %v, want %v", hookTable[tc.hook].name, log, tc.want)
		}
	}
}
