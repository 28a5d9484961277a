package classifier

import (
	"reflect"
	"strings"
	"testing"
)

// TestGenerate: every example's label is ClassOf its tokens, every class
// occurs, the same seed gives the same examples and another seed others.
func TestGenerate(t *testing.T) {
	for _, task := range []Task{{Length: 12, Marks: 2}, {Length: 32, Marks: 3}, {Length: 3, Marks: 3}} {
		examples, err := task.Generate(400, 7)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int32]int{}
		for i, ex := range examples {
			tokens, class := ex.Inputs[0].Value.([]int32), ex.Labels[0].Value.(int32)
			got, err := task.ClassOf(tokens)
			if err != nil || got != int(class) {
				t.Fatalf("%+v example %d %v: label %d, ClassOf %d (%v)", task, i, tokens, class, got, err)
			}
			seen[class]++
		}
		if len(seen) != task.Classes() {
			t.Errorf("%+v: %d of %d classes in 400 examples: %v", task, len(seen), task.Classes(), seen)
		}
		again, _ := task.Generate(400, 7)
		other, _ := task.Generate(400, 8)
		if !reflect.DeepEqual(examples, again) || reflect.DeepEqual(examples, other) {
			t.Errorf("%+v: seed 7 twice equal %v, seeds 7 and 8 equal %v", task, reflect.DeepEqual(examples, again), reflect.DeepEqual(examples, other))
		}
	}
}

// TestClassOf: the marks read in order as binary, X = 0, and errors that
// name what is wrong.
func TestClassOf(t *testing.T) {
	task := Task{Length: 5, Marks: 3}
	for _, tc := range []struct {
		tokens []int32
		class  int
		err    string
	}{
		{[]int32{0, X, 3, Y, Y}, 3, ""},
		{[]int32{Y, X, X, 1, 2}, 4, ""},
		{[]int32{Y, 0, Y, 0, Y}, 7, ""},
		{[]int32{0, X, 3, Y}, 0, "4 tokens"},
		{[]int32{0, X, 3, Y, 1}, 0, "2 marks"},
		{[]int32{0, X, 6, Y, Y}, 0, "token 6 at 2"},
	} {
		got, err := task.ClassOf(tc.tokens)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ClassOf(%v) = %d, %v; want an error containing %q", tc.tokens, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.class {
			t.Errorf("ClassOf(%v) = %d, %v; want %d", tc.tokens, got, err, tc.class)
		}
	}
}

// TestValidate refuses tasks that cannot be generated.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		task Task
		ok   bool
	}{{Task{32, 3}, true}, {Task{3, 3}, true}, {Task{2, 3}, false}, {Task{40, 0}, false}, {Task{40, 11}, false}} {
		if err := tc.task.Validate(); (err == nil) != tc.ok {
			t.Errorf("%+v.Validate() = %v, want ok %v", tc.task, err, tc.ok)
		}
	}
	if _, err := (Task{12, 2}).Generate(-1, 1); err == nil {
		t.Error("Generate(-1) did not fail")
	}
}
