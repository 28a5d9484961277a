package data

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
)

func TestDefaultCollate(t *testing.T) {
	tests := []struct {
		name      string
		fields    []Field // field of example 0 and 1 (same position)
		wantDType dtypes.DType
		wantDims  []int
		wantFlat  string
	}{
		{"float32 vector", []Field{{Value: []float32{1, 2}}, {Value: []float32{3, 4}}},
			dtypes.Float32, []int{2, 2}, "[[1 2] [3 4]]"},
		{"float32 matrix", []Field{{Value: []float32{1, 2, 3, 4, 5, 6}, Shape: []int{2, 3}},
			{Value: []float32{7, 8, 9, 10, 11, 12}, Shape: []int{2, 3}}},
			dtypes.Float32, []int{2, 2, 3}, "[[[1 2 3] [4 5 6]] [[7 8 9] [10 11 12]]]"},
		{"float64 vector", []Field{{Value: []float64{1.5}}, {Value: []float64{2.5}}},
			dtypes.Float64, []int{2, 1}, "[[1.5] [2.5]]"},
		{"int32 vector", []Field{{Value: []int32{1, 2, 3}}, {Value: []int32{4, 5, 6}}},
			dtypes.Int32, []int{2, 3}, "[[1 2 3] [4 5 6]]"},
		{"int64 vector", []Field{{Value: []int64{7}}, {Value: []int64{8}}},
			dtypes.Int64, []int{2, 1}, "[[7] [8]]"},
		{"uint8 image", []Field{{Value: []uint8{0, 255, 1, 2}, Shape: []int{2, 2}},
			{Value: []uint8{3, 4, 5, 6}, Shape: []int{2, 2}}},
			dtypes.Uint8, []int{2, 2, 2}, "[[[0 255] [1 2]] [[3 4] [5 6]]]"},
		{"bool vector", []Field{{Value: []bool{true}}, {Value: []bool{false}}},
			dtypes.Bool, []int{2, 1}, "[[true] [false]]"},
		{"float32 scalar", []Field{{Value: float32(0.5)}, {Value: float32(1.5)}},
			dtypes.Float32, []int{2}, "[0.5 1.5]"},
		{"int32 scalar", []Field{{Value: int32(3)}, {Value: int32(9)}},
			dtypes.Int32, []int{2}, "[3 9]"},
		{"int scalar stored as int32", []Field{{Value: 3}, {Value: -4}},
			dtypes.Int32, []int{2}, "[3 -4]"},
		{"int64 scalar", []Field{{Value: int64(1) << 40}, {Value: int64(2)}},
			dtypes.Int64, []int{2}, "[1099511627776 2]"},
		{"uint8 scalar", []Field{{Value: uint8(7)}, {Value: uint8(8)}},
			dtypes.Uint8, []int{2}, "[7 8]"},
		{"bool scalar", []Field{{Value: true}, {Value: false}},
			dtypes.Bool, []int{2}, "[true false]"},
		{"float64 scalar", []Field{{Value: 2.0}, {Value: 3.0}},
			dtypes.Float64, []int{2}, "[2 3]"},
		{"one-element slice with empty shape is a scalar", []Field{{Value: []float32{4}, Shape: []int{}},
			{Value: []float32{5}, Shape: []int{}}}, dtypes.Float32, []int{2}, "[4 5]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			examples := []Example{
				{Inputs: []Field{tc.fields[0]}, Labels: []Field{{Value: int32(0)}}},
				{Inputs: []Field{tc.fields[1]}, Labels: []Field{{Value: int32(1)}}},
			}
			b, err := DefaultCollate(examples)
			if err != nil {
				t.Fatalf("DefaultCollate: %v", err)
			}
			if b.Size != 2 || len(b.Inputs) != 1 || len(b.Labels) != 1 {
				t.Fatalf("got Size=%d, %d inputs, %d labels; want 2, 1, 1", b.Size, len(b.Inputs), len(b.Labels))
			}
			got := b.Inputs[0]
			if got.DType() != tc.wantDType {
				t.Errorf("dtype = %s, want %s", got.DType(), tc.wantDType)
			}
			if fmt.Sprint(got.Shape().Dimensions) != fmt.Sprint(tc.wantDims) {
				t.Errorf("dims = %v, want %v", got.Shape().Dimensions, tc.wantDims)
			}
			if flat := fmt.Sprint(got.Value()); flat != tc.wantFlat {
				t.Errorf("values = %s, want %s", flat, tc.wantFlat)
			}
			if labels := fmt.Sprint(b.Labels[0].Value()); labels != "[0 1]" {
				t.Errorf("labels = %s, want [0 1]", labels)
			}
		})
	}
}

func TestDefaultCollateErrors(t *testing.T) {
	ok := Example{Inputs: []Field{{Value: []float32{1, 2}}}, Labels: []Field{{Value: int32(0)}}}
	tests := []struct {
		name     string
		examples []Example
		wantErr  []string // substrings of the error
	}{
		{"no examples", nil, []string{"no examples"}},
		{"mismatched shapes", []Example{ok, ok, {Inputs: []Field{{Value: []float32{1, 2, 3}}}, Labels: ok.Labels}},
			[]string{"example 2", "Inputs[0]", "shape [3]", "example 0 shape [2]"}},
		{"mismatched dtypes", []Example{ok, {Inputs: ok.Inputs, Labels: []Field{{Value: int64(1)}}}},
			[]string{"example 1", "Labels[0]", "dtype Int64", "example 0 dtype Int32"}},
		{"mismatched field count", []Example{ok, {Inputs: append(append([]Field{}, ok.Inputs...), ok.Inputs...),
			Labels: ok.Labels}}, []string{"example 1 has 2 Inputs fields, example 0 has 1"}},
		{"shape product mismatch", []Example{{Inputs: []Field{{Value: []float32{1, 2, 3}, Shape: []int{2, 2}}}}},
			[]string{"example 0 Inputs[0]", "data.Field.Shape", "[2 2] has 4 elements", "length 3"}},
		{"shape on scalar", []Example{{Inputs: []Field{{Value: float32(1), Shape: []int{1}}}}},
			[]string{"data.Field.Shape: must be empty for scalar"}},
		{"negative dimension", []Example{{Inputs: []Field{{Value: []float32{}, Shape: []int{-1}}}}},
			[]string{"data.Field.Shape: dimensions must be >= 0"}},
		{"unsupported type", []Example{ok, {Inputs: []Field{{Value: "text"}}, Labels: ok.Labels}},
			[]string{"example 1 Inputs[0]", "unsupported type string", "[]float32"}},
		{"int overflow", []Example{{Inputs: []Field{{Value: 1 << 40}}}},
			[]string{"does not fit in int32"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DefaultCollate(tc.examples)
			if err == nil {
				t.Fatal("DefaultCollate: expected an error, got nil")
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}
