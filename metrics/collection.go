package metrics

import (
	"fmt"
	"slices"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// Named is a metric with the name it is logged under.
type Named struct {
	Name   string
	Metric Metric
}

// Collection updates several metrics of the same preds and target as one
// Updater, sharing work: metrics with the same StateKey (see Shared) keep one
// state and run one Update. Accuracy, Precision, Recall, F1 and Specificity of
// one Task, whatever their Average, share one set of per-class counts; ROC,
// AUROC and AveragePrecision of one Task and thresholds share their scores.
type Collection struct {
	named   []Named
	groups  []collectionGroup
	groupOf []int // by metric: its group
}

// collectionGroup is one state shared by one or more metrics.
type collectionGroup struct {
	updater Updater
	first   int // index of the first metric that uses it
	offset  int // index of its first state in the collection's States
	specs   []StateSpec
}

// NewCollection returns the collection of metrics, or an error naming an
// empty or repeated name.
func NewCollection(metrics ...Named) (*Collection, error) {
	c := &Collection{named: metrics}
	byKey := map[string]int{}
	seen := map[string]bool{}
	offset := 0
	for _, nm := range metrics {
		if nm.Name == "" || nm.Metric == nil {
			return nil, fmt.Errorf("NewCollection: metric %q: want a name and a metric", nm.Name)
		}
		if seen[nm.Name] {
			return nil, fmt.Errorf("NewCollection: name %q is used twice", nm.Name)
		}
		seen[nm.Name] = true
		if shared, ok := nm.Metric.(Shared); ok {
			if g, found := byKey[shared.StateKey()]; found {
				if !sameSpecs(nm.Metric.States(), c.named[c.groups[g].first].Metric.States()) {
					return nil, fmt.Errorf("NewCollection: %q and %q have StateKey %q but different states",
						nm.Name, c.named[c.groups[g].first].Name, shared.StateKey())
				}
				c.groupOf = append(c.groupOf, g)
				continue
			}
			byKey[shared.StateKey()] = len(c.groups)
		}
		specs := nm.Metric.States()
		prefixed := make([]StateSpec, len(specs))
		for i, s := range specs {
			s.Name = nm.Name + "/" + s.Name
			prefixed[i] = s
		}
		c.groupOf = append(c.groupOf, len(c.groups))
		c.groups = append(c.groups, collectionGroup{updater: nm.Metric, first: len(c.groupOf) - 1, offset: offset, specs: prefixed})
		offset += len(specs)
	}
	return c, nil
}

// Tasks implements Classifier: the tasks of its classification metrics.
func (c *Collection) Tasks() []Task {
	var out []Task
	for _, nm := range c.named {
		if cl, ok := nm.Metric.(Classifier); ok {
			out = append(out, cl.Tasks()...)
		}
	}
	return out
}

// Names returns the metrics' names, in order.
func (c *Collection) Names() []string {
	out := make([]string, len(c.named))
	for i, nm := range c.named {
		out[i] = nm.Name
	}
	return out
}

// States implements Updater: each shared state once, named after the first
// metric that uses it ("val_f1/tp").
func (c *Collection) States() []StateSpec {
	var out []StateSpec
	for _, g := range c.groups {
		out = append(out, g.specs...)
	}
	return out
}

// Update implements Updater: one Update per distinct state.
func (c *Collection) Update(state []*graph.Node, preds, target *graph.Node) []*graph.Node {
	out := make([]*graph.Node, 0, len(state))
	for _, g := range c.groups {
		out = append(out, g.updater.Update(state[g.offset:g.offset+len(g.specs)], preds, target)...)
	}
	return out
}

// Compute returns every metric's value by name.
func (c *Collection) Compute(state []*tensors.Tensor) (map[string]Value, error) {
	out := map[string]Value{}
	for i, nm := range c.named {
		g := c.groups[c.groupOf[i]]
		v, err := nm.Metric.Compute(state[g.offset : g.offset+len(g.specs)])
		if err != nil {
			return nil, fmt.Errorf("computing %s: %w", nm.Name, err)
		}
		out[nm.Name] = v
	}
	return out, nil
}

// sameSpecs reports whether a and b declare the same states.
func sameSpecs(a, b []StateSpec) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].DType != b[i].DType || a[i].Init != b[i].Init ||
			a[i].Reduce != b[i].Reduce || !slices.Equal(a[i].Dims, b[i].Dims) {
			return false
		}
	}
	return true
}
