package engine

import (
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/data"
)

// goBackend returns the process-wide pure-Go backend.
func goBackend(t *testing.T) compute.Backend {
	t.Helper()
	b, err := Backend("go")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func scalar(t *testing.T, out *tensors.Tensor) float32 {
	t.Helper()
	v, err := Float64(out)
	if err != nil {
		t.Fatal(err)
	}
	return float32(v)
}

// The two tests below reproduce, with GoMLX alone, what compute v0.1.14's
// PreferConstantsForVariables does to graphs not marked as training. They
// assert today's behaviour: when one fails, GoMLX has changed, and
// Program.refresh may no longer be needed.

// TestGoMLXEmbedsVariablesInEvalGraphs: a graph traced after a variable has
// a value keeps that value after the variable changes.
func TestGoMLXEmbedsVariablesInEvalGraphs(t *testing.T) {
	backend := goBackend(t)
	if !backend.Capabilities().PreferConstantsForVariables {
		t.Skip("the Go backend no longer prefers constants for variables")
	}
	store := model.NewStore()
	v, err := store.CreateVariable("w", tensors.FromValue(float32(1)))
	if err != nil {
		t.Fatal(err)
	}
	exec, err := model.NewExec(backend, store, func(_ *model.Scope, g *graph.Graph) *graph.Node {
		return v.NodeValue(g)
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float32{1, 1} { // the second is stale: w is 2 by then
		out, err := exec.Exec()
		if err != nil {
			t.Fatal(err)
		}
		if got := scalar(t, out[0]); got != want {
			t.Errorf("run %d read w = %v, want the embedded %v (has GoMLX stopped embedding?)", i, got, want)
		}
		if err := v.SetValue(tensors.FromValue(float32(2))); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGoMLXEvalGraphThatUpdatesAVariable: a graph not marked as training
// that adds 1 to a variable returns 1, 1, 1 instead of 1, 2, 3.
func TestGoMLXEvalGraphThatUpdatesAVariable(t *testing.T) {
	backend := goBackend(t)
	if !backend.Capabilities().PreferConstantsForVariables {
		t.Skip("the Go backend no longer prefers constants for variables")
	}
	store := model.NewStore()
	v, err := store.CreateVariable("count", tensors.FromValue(float32(0)))
	if err != nil {
		t.Fatal(err)
	}
	exec, err := model.NewExec(backend, store, func(_ *model.Scope, g *graph.Graph) *graph.Node {
		next := graph.OnePlus(v.NodeValue(g))
		v.SetNodeValue(next)
		return next
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		out, err := exec.Exec()
		if err != nil {
			t.Fatal(err)
		}
		if got := scalar(t, out[0]); got != 1 {
			t.Errorf("run %d = %v, want GoMLX's 1 (has it stopped embedding?)", i, got)
		}
	}
}

// TestProgramModes: volt's programs read current values in both modes;
// an evaluation program retraces only when an embedded value changed.
func TestProgramModes(t *testing.T) {
	emptyBatch := &data.Batch{Inputs: []*tensors.Tensor{tensors.FromValue(float32(0))}}
	for _, c := range []struct {
		name string
		mode Mode
		// want are the values of three runs of "count += 1; return count"
		// with count starting at 0; traces is how many graphs that took.
		want   []float32
		traces int
	}{
		{"training", Training, []float32{1, 2, 3}, 1},
		// Embedded, so each run's update makes the next one retrace.
		{"evaluation", Evaluation, []float32{1, 2, 3}, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := New(goBackend(t), dtypes.Float32, 1)
			if err != nil {
				t.Fatal(err)
			}
			v, err := e.Store.CreateVariable("count", tensors.FromValue(float32(0)))
			if err != nil {
				t.Fatal(err)
			}
			p, err := e.Compile("count", c.mode, func(scope *model.Scope, inputs, _ []*graph.Node) []*graph.Node {
				if got := scope.IsTraining(inputs[0].Graph()); got != (c.mode == Training) {
					t.Errorf("graph marked training = %v in mode %s", got, c.mode)
				}
				next := graph.OnePlus(v.NodeValue(inputs[0].Graph()))
				v.SetNodeValue(next)
				return []*graph.Node{next}
			})
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range c.want {
				out, _, err := p.Run(emptyBatch)
				if err != nil {
					t.Fatal(err)
				}
				if got := scalar(t, out[0]); got != want {
					t.Errorf("run %d = %v, want %v", i, got, want)
				}
			}
			if p.Traces() != c.traces {
				t.Errorf("traced %d graphs, want %d", p.Traces(), c.traces)
			}
		})
	}
}

// TestEvaluationProgramSeesNewWeights: an evaluation program that only
// reads a variable is traced once while the variable stays, and again after
// it changes (as after a training step or a checkpoint load).
func TestEvaluationProgramSeesNewWeights(t *testing.T) {
	e, err := New(goBackend(t), dtypes.Float32, 1)
	if err != nil {
		t.Fatal(err)
	}
	v, err := e.Store.CreateVariable("w", tensors.FromValue(float32(1)))
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Compile("read", Evaluation, func(scope *model.Scope, inputs, _ []*graph.Node) []*graph.Node {
		return []*graph.Node{graph.Add(v.NodeValue(inputs[0].Graph()), inputs[0])}
	})
	if err != nil {
		t.Fatal(err)
	}
	batch := &data.Batch{Inputs: []*tensors.Tensor{tensors.FromValue(float32(10))}}
	for i, c := range []struct {
		set    float32 // 0: leave w
		want   float32
		traces int
	}{{0, 11, 1}, {0, 11, 1}, {2, 12, 2}, {0, 12, 2}, {3, 13, 3}} {
		if c.set != 0 {
			if err := v.SetValue(tensors.FromValue(c.set)); err != nil {
				t.Fatal(err)
			}
		}
		out, _, err := p.Run(batch)
		if err != nil {
			t.Fatal(err)
		}
		if got := scalar(t, out[0]); got != c.want {
			t.Errorf("run %d = %v, want %v", i, got, c.want)
		}
		if p.Traces() != c.traces {
			t.Errorf("run %d: %d traces, want %d", i, p.Traces(), c.traces)
		}
	}
}

// TestEvaluationProgramSeesNewValuesOfVariablesItCreated: an evaluation
// program whose trace creates its variable (a module's weights, when
// Validate or Test runs before any training) must retrace once the
// variable changes, for every graph it traced: created with a value (as
// VariableWithValue, or a store that loads a checkpoint), the first graph
// embeds it; created by an initializer, the first graph reads it as a
// parameter and the graph of the next shape (an epoch's last, smaller
// batch) embeds the initialised value.
func TestEvaluationProgramSeesNewValuesOfVariablesItCreated(t *testing.T) {
	for _, c := range []struct {
		name     string
		variable func(scope *model.Scope) *model.Variable
	}{
		{"created with a value", func(scope *model.Scope) *model.Variable { return scope.VariableWithValue("w", float32(1)) }},
		{"created by an initializer", func(scope *model.Scope) *model.Variable {
			return scope.VariableWithShape("w", shapes.Make(dtypes.Float32))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := New(goBackend(t), dtypes.Float32, 1)
			if err != nil {
				t.Fatal(err)
			}
			p, err := e.Compile("read", Evaluation, func(scope *model.Scope, inputs, _ []*graph.Node) []*graph.Node {
				return []*graph.Node{graph.Add(c.variable(scope).NodeValue(inputs[0].Graph()), inputs[0])}
			})
			if err != nil {
				t.Fatal(err)
			}
			// A batch of one shape, then batches of another (a second graph).
			for _, input := range []*tensors.Tensor{tensors.FromValue([]float32{10}), tensors.FromValue([]float32{20, 20})} {
				batch := &data.Batch{Inputs: []*tensors.Tensor{input}}
				for i, set := range []float32{0, 2, 0, 3} { // 0: leave w
					if set != 0 {
						if err := e.Store.GetVariable("/w").SetValue(tensors.FromValue(set)); err != nil {
							t.Fatal(err)
						}
					}
					out, _, err := p.Run(batch)
					if err != nil {
						t.Fatal(err)
					}
					w, err := e.Store.GetVariable("/w").Value()
					if err != nil {
						t.Fatal(err)
					}
					var in, got float32
					tensors.MustConstFlatData(input, func(v []float32) { in = v[0] })
					tensors.MustConstFlatData(out[0], func(v []float32) { got = v[0] })
					if want := scalar(t, w) + in; got != want {
						t.Errorf("input %v, run %d = %v, want w + input = %v (a stale embedded w)", in, i, got, want)
					}
				}
			}
		})
	}
}
