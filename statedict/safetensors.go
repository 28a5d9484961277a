package statedict

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"slices"

	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/nlpodyssey/safetensors"
	"github.com/voltml/volt/checkpoint"
)

// readSafetensors reads every tensor of a safetensors file, sorted by
// key (the format keeps no order of its own).
func readSafetensors(path string) (*StateDict, error) {
	buf, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	st, err := safetensors.Deserialize(buf)
	if err != nil {
		return nil, fmt.Errorf("%s: not a safetensors file: %w", path, err)
	}
	named := st.Tensors()
	slices.SortStableFunc(named, func(a, b safetensors.NamedTensorView) int {
		return bytes.Compare([]byte(a.Name), []byte(b.Name))
	})
	sd := New()
	sd.Path = path
	for _, nv := range named {
		tv := nv.TensorView
		dtype, err := checkpoint.ParseDType(tv.DType().String())
		if err != nil {
			return nil, fmt.Errorf("%s: tensor %q: %w", path, nv.Name, err)
		}
		dims := make([]int, len(tv.Shape()))
		for i, d := range tv.Shape() {
			dims[i] = int(d)
		}
		t := tensors.FromShape(shapes.Make(dtype, dims...))
		t.MutableBytes(func(data []byte) { copy(data, tv.Data()) })
		sd.Set(nv.Name, t)
	}
	return sd, nil
}

// Save writes sd to path as a safetensors file that PyTorch's
// safetensors.torch.load_file and Hugging Face's from_pretrained read:
// the tensors sorted by key, each tensor's data in the same order, and
// the metadata {"format": "pt"}.
func (sd *StateDict) Save(path string) error {
	keys := slices.Sorted(slices.Values(sd.keys))
	header := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var data bytes.Buffer
	for _, key := range keys {
		t := sd.tensors[key]
		name, err := checkpoint.DTypeName(t.DType())
		if err != nil {
			return fmt.Errorf("statedict.Save %s: tensor %q: %w", path, key, err)
		}
		begin := data.Len()
		if err := t.ConstBytes(func(b []byte) { data.Write(b) }); err != nil {
			return fmt.Errorf("statedict.Save %s: tensor %q: %w", path, key, err)
		}
		dims := t.Shape().Dimensions
		if dims == nil {
			dims = []int{}
		}
		header[key] = map[string]any{"dtype": name, "shape": dims, "data_offsets": []int{begin, data.Len()}}
	}
	h, err := json.Marshal(header)
	if err != nil {
		return fmt.Errorf("statedict.Save %s: %w", path, err)
	}
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	out = append(append(out, h...), data.Bytes()...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		return fmt.Errorf("statedict.Save: %w", err)
	}
	return nil
}
