package statedict_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/dtypes/bfloat16"
	"github.com/gomlx/compute/dtypes/float16"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/statedict"
)

// goldenTensor is one tensor of testdata/golden.json, written by gen.py.
type goldenTensor struct {
	DType  string    `json:"dtype"`
	Shape  []int     `json:"shape"`
	Values []float64 `json:"values"`
}

type goldens struct {
	Net        map[string]goldenTensor `json:"net"`
	NetKeys    []string                `json:"net_keys"`
	DTypes     map[string]goldenTensor `json:"dtypes"`
	DTypesKeys []string                `json:"dtypes_keys"`
	GPT2       map[string]goldenTensor `json:"gpt2"`
}

func readGoldens(t *testing.T) goldens {
	t.Helper()
	b, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g goldens
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// torchDTypes maps torch's dtype names to GoMLX's.
var torchDTypes = map[string]dtypes.DType{
	"float64": dtypes.Float64, "float32": dtypes.Float32, "float16": dtypes.Float16, "bfloat16": dtypes.BFloat16,
	"int64": dtypes.Int64, "int32": dtypes.Int32, "int16": dtypes.Int16, "int8": dtypes.Int8,
	"uint8": dtypes.Uint8, "bool": dtypes.Bool,
}

// float64s returns t's values as float64, whatever its dtype.
func float64s(t *testing.T, v *tensors.Tensor) []float64 {
	t.Helper()
	switch v.DType() {
	case dtypes.Float64:
		return tensors.MustCopyFlatData[float64](v)
	case dtypes.Float32:
		return widen(tensors.MustCopyFlatData[float32](v), func(x float32) float64 { return float64(x) })
	case dtypes.Float16:
		return widen(tensors.MustCopyFlatData[float16.Float16](v), float16.Float16.Float64)
	case dtypes.BFloat16:
		return widen(tensors.MustCopyFlatData[bfloat16.BFloat16](v), bfloat16.BFloat16.Float64)
	case dtypes.Int64:
		return widen(tensors.MustCopyFlatData[int64](v), func(x int64) float64 { return float64(x) })
	case dtypes.Int32:
		return widen(tensors.MustCopyFlatData[int32](v), func(x int32) float64 { return float64(x) })
	case dtypes.Int16:
		return widen(tensors.MustCopyFlatData[int16](v), func(x int16) float64 { return float64(x) })
	case dtypes.Int8:
		return widen(tensors.MustCopyFlatData[int8](v), func(x int8) float64 { return float64(x) })
	case dtypes.Uint8:
		return widen(tensors.MustCopyFlatData[uint8](v), func(x uint8) float64 { return float64(x) })
	case dtypes.Bool:
		return widen(tensors.MustCopyFlatData[bool](v), func(x bool) float64 {
			if x {
				return 1
			}
			return 0
		})
	}
	t.Fatalf("dtype %s", v.DType())
	return nil
}

func widen[A any](in []A, f func(A) float64) []float64 {
	out := make([]float64, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

// checkTensors checks that sd holds exactly want's tensors (renamed by
// prefix), with their dtypes, shapes and exact values.
func checkTensors(t *testing.T, sd *statedict.StateDict, want map[string]goldenTensor, prefix string) {
	t.Helper()
	if sd.Len() != len(want) {
		t.Errorf("%d tensors %v, want %d", sd.Len(), sd.Keys(), len(want))
	}
	for key, g := range want {
		v := sd.Get(prefix + key)
		if v == nil {
			t.Errorf("no tensor %q; keys %v", prefix+key, sd.Keys())
			continue
		}
		if v.DType() != torchDTypes[g.DType] || !slices.Equal(v.Shape().Dimensions, g.Shape) && !(len(g.Shape) == 0 && v.Shape().Rank() == 0) {
			t.Errorf("%q: %s, torch's %s%v", key, v.Shape(), g.DType, g.Shape)
			continue
		}
		if got := float64s(t, v); !slices.Equal(got, g.Values) {
			t.Errorf("%q: values %v, torch's %v", key, got, g.Values)
		}
	}
}

// TestReadTorchAndSafetensorsFiles: the state dict torch wrote in each
// format reads with torch's keys, dtypes, shapes and exact values.
func TestReadTorchAndSafetensorsFiles(t *testing.T) {
	g := readGoldens(t)
	for _, tc := range []struct {
		file, prefix string
		want         map[string]goldenTensor
		ordered      []string
	}{
		{"net.pt", "", g.Net, g.NetKeys},
		{"net_legacy.pt", "", g.Net, g.NetKeys},
		{"net.safetensors", "", g.Net, nil},
		{"lightning.ckpt", "model.", g.Net, nil},
		{"dtypes.pt", "", g.DTypes, g.DTypesKeys},
		{"gpt2.pt", "", g.GPT2, nil},
	} {
		t.Run(tc.file, func(t *testing.T) {
			sd, err := statedict.Read("testdata/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			checkTensors(t, sd, tc.want, tc.prefix)
			if tc.ordered != nil && !slices.Equal(sd.Keys(), tc.ordered) {
				t.Errorf("keys in order %v, torch's %v", sd.Keys(), tc.ordered)
			}
		})
	}
}

// TestReadRefusesWhatIsNotAStateDict: a pickled module, a truncated
// torch.save file, a text file and a missing file are errors naming the
// file and what would be valid.
func TestReadRefusesWhatIsNotAStateDict(t *testing.T) {
	dir := t.TempDir()
	text := dir + "/notes.txt"
	if err := os.WriteFile(text, []byte("hello, weights"), 0o644); err != nil {
		t.Fatal(err)
	}
	truncated := dir + "/truncated.pt"
	whole, err := os.ReadFile("testdata/net.pt")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(truncated, whole[:len(whole)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{"testdata/module.pt", "save model.state_dict()"},
		{truncated, "a zip archive (as torch.save writes) that does not open, truncated or damaged"},
		{text, "neither a safetensors file nor a torch.save file"},
		{dir + "/absent.pt", "no such file"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			_, err := statedict.Read(tc.path)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
				t.Errorf("error %v, want one naming %s and saying %q", err, tc.path, tc.want)
			}
		})
	}
}
