package engine

import (
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/data"
)

// TestCarryAccumulatesWithoutRetrace: a program of each mode that adds each
// batch's sum to carried state accumulates across runs (not 1, 1, 1 as a
// variable does in an evaluation graph on the Go backend) and traces twice
// in all: once creating the slot, once taking it as an input.
func TestCarryAccumulatesWithoutRetrace(t *testing.T) {
	for _, mode := range []Mode{Training, Evaluation} {
		t.Run(mode.String(), func(t *testing.T) {
			eng, err := New(goBackend(t), dtypes.Float32, 1)
			if err != nil {
				t.Fatal(err)
			}
			c := NewCarry()
			p, err := eng.Compile("sum", mode, func(_ *model.Scope, inputs, _ []*graph.Node) []*graph.Node {
				g := inputs[0].Graph()
				total := c.Node(g, "total", tensors.FromValue(float64(0)))
				batch := graph.ConvertDType(graph.ReduceAllSum(inputs[0]), dtypes.Float64)
				c.Set("total", graph.Add(total, batch))
				return []*graph.Node{batch}
			})
			if err != nil {
				t.Fatal(err)
			}
			p.SetCarry(c)
			var want float64
			for i := range 5 {
				x := []float32{float32(i), 1}
				want += float64(i) + 1
				outs, _, err := p.Run(&data.Batch{Inputs: []*tensors.Tensor{tensors.FromValue(x)}})
				if err != nil {
					t.Fatal(err)
				}
				if len(outs) != 1 {
					t.Fatalf("run %d: %d outputs, want 1 (carried outputs stripped)", i, len(outs))
				}
				got, err := Float64(c.Value("total"))
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Fatalf("run %d: carried total %v, want %v", i, got, want)
				}
			}
			if p.Traces() != 2 {
				t.Errorf("%d traces, want 2 (the slot's creation, then the slot as an input)", p.Traces())
			}
			c.Reset("total")
			if got, _ := Float64(c.Value("total")); got != 0 {
				t.Errorf("after Reset: %v, want 0", got)
			}
		})
	}
}

// TestCarryRestoreBeforeCreation: a value restored before the slot exists is
// its starting value.
func TestCarryRestoreBeforeCreation(t *testing.T) {
	eng, err := New(goBackend(t), dtypes.Float32, 1)
	if err != nil {
		t.Fatal(err)
	}
	c := NewCarry()
	if err := c.Restore(map[string]*tensors.Tensor{"n": tensors.FromValue(int64(40))}); err != nil {
		t.Fatal(err)
	}
	p, err := eng.Compile("count", Evaluation, func(_ *model.Scope, inputs, _ []*graph.Node) []*graph.Node {
		g := inputs[0].Graph()
		n := c.Node(g, "n", tensors.FromValue(int64(0)))
		c.Set("n", graph.AddScalar(n, 1))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	p.SetCarry(c)
	for range 2 {
		if _, _, err := p.Run(&data.Batch{Inputs: []*tensors.Tensor{tensors.FromValue([]float32{1})}}); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := Float64(c.Value("n")); got != 42 {
		t.Errorf("restored 40, two runs: %v, want 42", got)
	}
}

// TestCarryRestoredValuesBeforeCreation: Values includes the restored
// values of slots not created yet (a checkpoint saves them), and
// DiscardRestored drops them, so that a slot created later starts from its
// initial value.
func TestCarryRestoredValuesBeforeCreation(t *testing.T) {
	eng, err := New(goBackend(t), dtypes.Float32, 1)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		discard bool
		want    float64 // after one run
	}{
		{"kept", false, 41},
		{"discarded", true, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCarry()
			restored := map[string]*tensors.Tensor{"state/n": tensors.FromValue(int64(40)), "other": tensors.FromValue(int64(7))}
			if err := c.Restore(restored); err != nil {
				t.Fatal(err)
			}
			vals := c.Values("state/")
			if len(vals) != 1 || vals["state/n"] == nil {
				t.Fatalf("Values(state/) before creation: %v, want the restored state/n only", vals)
			}
			if got, _ := Float64(vals["state/n"]); got != 40 {
				t.Errorf("Values(state/)[state/n] = %v, want the restored 40", got)
			}
			if tc.discard {
				c.DiscardRestored()
				if vals := c.Values(""); len(vals) != 0 {
					t.Errorf("Values after DiscardRestored: %v, want none", vals)
				}
			}
			p, err := eng.Compile("count", Evaluation, func(_ *model.Scope, inputs, _ []*graph.Node) []*graph.Node {
				n := c.Node(inputs[0].Graph(), "state/n", tensors.FromValue(int64(0)))
				c.Set("state/n", graph.AddScalar(n, 1))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			p.SetCarry(c)
			if _, _, err := p.Run(&data.Batch{Inputs: []*tensors.Tensor{tensors.FromValue([]float32{1})}}); err != nil {
				t.Fatal(err)
			}
			if got, _ := Float64(c.Values("state/")["state/n"]); got != tc.want {
				t.Errorf("after one run: %v, want %v", got, tc.want)
			}
		})
	}
}
