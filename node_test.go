package volt_test

import (
	"reflect"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
)

// TestNodeIsGraphNode: volt.Node is graph.Node itself, not a type of its
// own, so GoMLX's functions and volt's signatures exchange it without a
// conversion (a defined type would fail to compile below).
func TestNodeIsGraphNode(t *testing.T) {
	var viaGraph func(*graph.Node) *graph.Node = graph.Neg
	var viaVolt func(*volt.Node) *volt.Node = viaGraph
	var step func(*volt.Step, volt.Batch) *graph.Node = (&boring{}).TrainingStep
	for _, tc := range []struct {
		name      string
		got, want reflect.Type
	}{
		{"volt.Node", reflect.TypeFor[volt.Node](), reflect.TypeFor[graph.Node]()},
		{"a func of *volt.Node", reflect.TypeOf(viaVolt), reflect.TypeOf(viaGraph)},
		{"Module.TrainingStep", reflect.TypeOf(step).Out(0), reflect.TypeFor[*volt.Node]()},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}
