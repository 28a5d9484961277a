package checkpoint

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/dtypes/bfloat16"
	"github.com/gomlx/gomlx/core/tensors"
)

func TestGoMLXRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   *tensors.Tensor
		want any // the flat values of the loaded tensor
	}{
		{"f32 matrix", tensors.FromFlatDataAndDimensions([]float32{1, 2, 3, 4, 5, 6}, 2, 3), []float32{1, 2, 3, 4, 5, 6}},
		{"f64 scalar", tensors.FromValue(2.5), []float64{2.5}},
		{"int64", tensors.FromFlatDataAndDimensions([]int64{-1, 1 << 40}, 2), []int64{-1, 1 << 40}},
		{"bool", tensors.FromFlatDataAndDimensions([]bool{true, false, true}, 3), []bool{true, false, true}},
		{"bf16", tensors.FromFlatDataAndDimensions([]bfloat16.BFloat16{bfloat16.FromFloat32(1.5)}, 1), []bfloat16.BFloat16{bfloat16.FromFloat32(1.5)}},
		{"uint8 empty", tensors.FromFlatDataAndDimensions([]uint8{}, 0), []uint8{}},
	}
	var file File
	for _, tt := range tests {
		ct, err := FromGoMLX(tt.name, tt.in)
		if err != nil {
			t.Fatalf("FromGoMLX(%s): %v", tt.name, err)
		}
		file.Tensors = append(file.Tensors, ct)
	}
	path := filepath.Join(t.TempDir(), "g.ckpt")
	if err := Save(path, &file); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct := loaded.Tensor(tt.name)
			if ct == nil {
				t.Fatalf("tensor %q missing", tt.name)
			}
			out, err := ct.ToGoMLX()
			if err != nil {
				t.Fatal(err)
			}
			if !out.Shape().Equal(tt.in.Shape()) {
				t.Errorf("shape %s, want %s", out.Shape(), tt.in.Shape())
			}
			var got any
			out.MustConstFlatData(func(flat any) { got = reflect.ValueOf(flat).Interface() })
			gotLen, wantLen := reflect.ValueOf(got).Len(), reflect.ValueOf(tt.want).Len()
			if gotLen != wantLen || (wantLen > 0 && !reflect.DeepEqual(got, tt.want)) {
				t.Errorf("values %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFromGoMLXErrors(t *testing.T) {
	tests := []struct {
		name string
		in   *tensors.Tensor
		want string
	}{
		{"nil", nil, `tensor "x": the GoMLX tensor is nil`},
		{"complex", tensors.FromValue(complex64(1)), `tensor "x": dtype Complex64 cannot be stored in a checkpoint`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromGoMLX("x", tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
	bad := Tensor{Name: "y", DType: dtypes.Float32, Shape: []int{2}, Data: []byte{1}}
	if _, err := bad.ToGoMLX(); err == nil || !strings.Contains(err.Error(), `tensor "y": shape [2] of F32 needs 2 elements`) {
		t.Errorf("ToGoMLX of a short tensor: %v", err)
	}
}
