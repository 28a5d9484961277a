package statedict

import (
	"archive/zip"
	"fmt"
	"sort"
	"strings"

	"github.com/gomlx/compute/dtypes/bfloat16"
	"github.com/gomlx/compute/dtypes/float16"
	"github.com/gomlx/compute/dtypes/gotype"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/nlpodyssey/gopickle/pytorch"
	"github.com/nlpodyssey/gopickle/types"
)

// readTorch reads a torch.save file (zip or legacy format) with
// github.com/nlpodyssey/gopickle:
// its pickle is unpickled in Go and each tensor's storage read from the
// archive, then gathered by the tensor's offset and strides.
func readTorch(path string, format fileFormat) (*StateDict, error) {
	if format == formatTorchZip { // gopickle reads a zip that does not open as the legacy format, and says so confusingly
		z, err := zip.OpenReader(path)
		if err != nil {
			return nil, fmt.Errorf("%s: a zip archive (as torch.save writes) that does not open, truncated or damaged: %w", path, err)
		}
		z.Close()
	}
	obj, err := pytorch.Load(path)
	if err != nil {
		return nil, fmt.Errorf("%s: reading the torch.save file: %w (TorchScript archives and pickled nn.Module objects are not state dicts: save model.state_dict())", path, err)
	}
	entries, err := tensorDict(obj)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sd := New()
	sd.Path = path
	for _, e := range entries {
		t, err := fromTorch(e.value)
		if err != nil {
			return nil, fmt.Errorf("%s: tensor %q: %w", path, e.key, err)
		}
		sd.Set(e.key, t)
	}
	return sd, nil
}

type entry struct {
	key   string
	value *pytorch.Tensor
}

// tensorDict returns the entries of obj when it is a dict of tensors, or
// of its "state_dict" or "model_state_dict" entry when that is one; the
// error says what obj holds instead.
func tensorDict(obj any) ([]entry, error) {
	entries, others, ok := dictEntries(obj)
	if !ok {
		return nil, fmt.Errorf("the file holds a %T, not a dict of tensors (save model.state_dict(), not the model)", obj)
	}
	if len(others) == 0 {
		return entries, nil
	}
	for _, name := range []string{"state_dict", "model_state_dict"} {
		if inner, ok := others[name]; ok {
			if e, o, ok := dictEntries(inner); ok && len(o) == 0 {
				return e, nil
			}
		}
	}
	keys := make([]string, 0, len(others))
	for k := range others {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return nil, fmt.Errorf("the file's dict has entries that are not tensors (%s) and no \"state_dict\" or \"model_state_dict\" dict of tensors", strings.Join(keys, ", "))
}

// dictEntries splits a pickled dict into its tensor entries, in order,
// and its other entries by key; ok is false when obj is not a dict with
// string keys.
func dictEntries(obj any) (tensorEntries []entry, others map[string]any, ok bool) {
	others = map[string]any{}
	add := func(k, v any) bool {
		key, isString := k.(string)
		if !isString {
			return false
		}
		if t, isTensor := v.(*pytorch.Tensor); isTensor {
			tensorEntries = append(tensorEntries, entry{key, t})
		} else {
			others[key] = v
		}
		return true
	}
	switch d := obj.(type) {
	case *types.OrderedDict:
		for e := d.List.Front(); e != nil; e = e.Next() {
			kv := e.Value.(*types.OrderedDictEntry)
			if !add(kv.Key, kv.Value) {
				return nil, nil, false
			}
		}
	case *types.Dict:
		for _, kv := range *d {
			if !add(kv.Key, kv.Value) {
				return nil, nil, false
			}
		}
	default:
		return nil, nil, false
	}
	return tensorEntries, others, true
}

// fromTorch copies t's values, gathered by its storage offset and
// strides, into a new GoMLX tensor of t's dtype.
func fromTorch(t *pytorch.Tensor) (*tensors.Tensor, error) {
	switch s := t.Source.(type) {
	case *pytorch.FloatStorage:
		return gather(t, s.Data)
	case *pytorch.DoubleStorage:
		return gather(t, s.Data)
	case *pytorch.HalfStorage:
		return gather(t, widen(s.Data, float16.FromFloat32))
	case *pytorch.BFloat16Storage:
		return gather(t, widen(s.Data, bfloat16.FromFloat32))
	case *pytorch.LongStorage:
		return gather(t, s.Data)
	case *pytorch.IntStorage:
		return gather(t, s.Data)
	case *pytorch.ShortStorage:
		return gather(t, s.Data)
	case *pytorch.CharStorage:
		return gather(t, s.Data)
	case *pytorch.ByteStorage:
		return gather(t, s.Data)
	case *pytorch.BoolStorage:
		return gather(t, s.Data)
	}
	return nil, fmt.Errorf("storage %T is not supported (float64/32/16, bfloat16, int64/32/16/8, uint8 and bool are)", t.Source)
}

// gather returns the values of t, a view of storage, in row-major order.
func gather[T gotype.Supported](t *pytorch.Tensor, storage []T) (*tensors.Tensor, error) {
	dims, strides := t.Size, t.Stride
	if len(strides) != len(dims) {
		return nil, fmt.Errorf("size %v and stride %v differ in rank", dims, strides)
	}
	n := 1
	for _, d := range dims {
		n *= d
	}
	out := make([]T, n)
	if n > 0 {
		last := t.StorageOffset
		for i, d := range dims {
			last += (d - 1) * strides[i]
		}
		if t.StorageOffset < 0 || last >= len(storage) {
			return nil, fmt.Errorf("size %v, stride %v and offset %d reach past its storage of %d values", dims, strides, t.StorageOffset, len(storage))
		}
	}
	index := make([]int, len(dims))
	for i := range out {
		pos := t.StorageOffset
		for a, k := range index {
			pos += k * strides[a]
		}
		out[i] = storage[pos]
		for a := len(index) - 1; a >= 0; a-- { // next row-major index
			index[a]++
			if index[a] < dims[a] {
				break
			}
			index[a] = 0
		}
	}
	return fromFlat(out, dims), nil
}

// fromFlat returns a tensor of dims holding values (a scalar when dims is
// empty).
func fromFlat[T gotype.Supported](values []T, dims []int) *tensors.Tensor {
	if len(dims) == 0 {
		return tensors.FromScalar(values[0])
	}
	return tensors.FromFlatDataAndDimensions(values, dims...)
}
