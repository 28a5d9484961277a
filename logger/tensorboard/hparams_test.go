package tensorboard

import (
	"reflect"
	"testing"
)

func TestFlattenHparams(t *testing.T) {
	type point struct{ X, Y int }
	tests := []struct {
		name string
		in   map[string]any
		want []hparam
	}{
		{"scalars", map[string]any{"b": true, "i": int64(-3), "u": uint(4), "f": float32(0.5), "s": "x"}, []hparam{
			{name: "b", typ: typeBool, b: true},
			{name: "f", typ: typeFloat64, num: 0.5},
			{name: "i", typ: typeFloat64, num: -3},
			{name: "s", typ: typeString, str: "x"},
			{name: "u", typ: typeFloat64, num: 4},
		}},
		{"nested maps use slash", map[string]any{"opt": map[string]any{"lr": 0.1, "sched": map[string]int{"steps": 10}}}, []hparam{
			{name: "opt/lr", typ: typeFloat64, num: 0.1},
			{name: "opt/sched/steps", typ: typeFloat64, num: 10},
		}},
		{"nil dropped", map[string]any{"none": nil, "ptr": (*int)(nil), "keep": 1}, []hparam{
			{name: "keep", typ: typeFloat64, num: 1},
		}},
		{"others as JSON text", map[string]any{"list": []any{1, "a"}, "pt": point{1, 2}}, []hparam{
			{name: "list", typ: typeString, str: `[1,"a"]`},
			{name: "pt", typ: typeString, str: `{"X":1,"Y":2}`},
		}},
		{"%v when not JSON", map[string]any{"c": complex(1, 2)}, []hparam{{name: "c", typ: typeString, str: "(1+2i)"}}},
		{"pointer followed", map[string]any{"p": new(float64)}, []hparam{{name: "p", typ: typeFloat64}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := flattenHparams(tt.in)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("flattenHparams(%v) =\n%+v\nwant\n%+v", tt.in, got, tt.want)
			}
		})
	}
}
