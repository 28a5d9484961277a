package data

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/edsrzf/mmap-go"
	"github.com/nlpodyssey/safetensors"
)

// bfloat16Kind is the NPYArray kind of a bfloat16 tensor (safetensors'
// BF16; numpy has no such dtype).
const bfloat16Kind = 'B'

// safetensorsKinds maps a safetensors dtype to the NPYArray kind and
// element size that read it (every dtype the format defines).
var safetensorsKinds = map[safetensors.DType]struct {
	kind byte
	size int
}{
	safetensors.BOOL: {'b', 1}, safetensors.U8: {'u', 1}, safetensors.I8: {'i', 1},
	safetensors.I16: {'i', 2}, safetensors.U16: {'u', 2}, safetensors.F16: {'f', 2},
	safetensors.BF16: {bfloat16Kind, 2}, safetensors.I32: {'i', 4}, safetensors.U32: {'u', 4},
	safetensors.F32: {'f', 4}, safetensors.F64: {'f', 8}, safetensors.I64: {'i', 8},
	safetensors.U64: {'u', 8},
}

// SafetensorsFile is a memory-mapped .safetensors file (Hugging Face's
// format: an 8-byte little-endian header length, a JSON header, the
// tensors' bytes). Its header is parsed and checked by
// github.com/nlpodyssey/safetensors; Tensor reads a tensor's examples in
// place, as NPYArray does. Close it when done.
type SafetensorsFile struct {
	// Path is the file's path.
	Path string

	mapped mmap.MMap
	file   *os.File
	st     safetensors.SafeTensors
}

// OpenSafetensors memory-maps the .safetensors file at path and checks its
// header. A file shorter than its header says, a header that is not the
// format's JSON, or tensors whose byte ranges do not tile the data, are
// errors naming the file.
func OpenSafetensors(path string) (*SafetensorsFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data.OpenSafetensors: %w", err)
	}
	sf, err := openSafetensors(f, path)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("data.OpenSafetensors: %s: %w", path, err)
	}
	return sf, nil
}

// openSafetensors maps f and parses its header.
func openSafetensors(f *os.File, path string) (*SafetensorsFile, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if info.Size() < 8 {
		return nil, fmt.Errorf("not a safetensors file: %d bytes, shorter than the 8-byte header length", info.Size())
	}
	sf := &SafetensorsFile{Path: path, file: f}
	sf.mapped, err = mmap.Map(f, mmap.RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("memory-mapping: %w", err)
	}
	if err := sf.parse(); err != nil {
		sf.mapped.Unmap()
		return nil, err
	}
	return sf, nil
}

// parse checks the header length against the file's, then lets the
// safetensors module parse and validate the header.
func (sf *SafetensorsFile) parse() error {
	raw := []byte(sf.mapped)
	n := binary.LittleEndian.Uint64(raw[:8])
	if n > uint64(len(raw)-8) {
		return fmt.Errorf("truncated or not a safetensors file: the header length says %d bytes, the file has %d after it", n, len(raw)-8)
	}
	st, err := safetensors.Deserialize(raw)
	if err != nil {
		if err.Error() == "metadata incomplete buffer" {
			return errors.New("truncated or padded: the tensors' byte ranges in the header do not end where the file does")
		}
		return fmt.Errorf("bad header: %w", err)
	}
	sf.st = st
	return nil
}

// Names returns the names of the file's tensors, sorted.
func (sf *SafetensorsFile) Names() []string {
	names := sf.st.Names()
	slices.Sort(names)
	return names
}

// Tensor returns the named tensor as an array of examples along its first
// axis (read as NPYArray reads a .npy array of the same dtype; BF16 as
// []float32). A missing name or a 0-d tensor is an error listing the names.
func (sf *SafetensorsFile) Tensor(name string) (*NPYArray, error) {
	tv, ok := sf.st.Tensor(name)
	if !ok {
		return nil, fmt.Errorf("data.SafetensorsFile %s: no tensor %q; the file has %q", sf.Path, name, sf.Names())
	}
	if len(tv.Shape()) == 0 {
		return nil, fmt.Errorf("data.SafetensorsFile %s: tensor %q is 0-d, it has no example axis", sf.Path, name)
	}
	k, ok := safetensorsKinds[tv.DType()]
	if !ok {
		return nil, fmt.Errorf("data.SafetensorsFile %s: tensor %q has dtype %v, which volt does not read", sf.Path, name, tv.DType())
	}
	shape := make([]int, len(tv.Shape()))
	for i, d := range tv.Shape() {
		shape[i] = int(d)
	}
	return &NPYArray{
		Path:  sf.Path,
		Descr: tv.DType().String(),
		Shape: shape,
		data:  tv.Data(),
		size:  k.size,
		kind:  k.kind,
		order: binary.LittleEndian,
		label: fmt.Sprintf("data.SafetensorsFile %s: tensor %q", sf.Path, name),
	}, nil
}

// Close unmaps the file. Arrays from Tensor must not be read after it.
func (sf *SafetensorsFile) Close() error {
	err := sf.mapped.Unmap()
	return errors.Join(err, sf.file.Close())
}

// SafetensorsDataset is a map-style Dataset over the tensors of one
// .safetensors file: example i holds row i of each input tensor and of
// each label tensor. Open it with OpenSafetensorsDataset and Close it when
// done.
type SafetensorsDataset struct {
	File           *SafetensorsFile
	Inputs, Labels []*NPYArray
}

var _ Dataset = (*SafetensorsDataset)(nil)

// OpenSafetensorsDataset memory-maps path and takes the named input and
// label tensors, which must have the same first dimension.
func OpenSafetensorsDataset(path string, inputs, labels []string) (*SafetensorsDataset, error) {
	sf, err := OpenSafetensors(path)
	if err != nil {
		return nil, err
	}
	ds := &SafetensorsDataset{File: sf}
	take := func(names []string) ([]*NPYArray, error) {
		var out []*NPYArray
		for _, name := range names {
			a, err := sf.Tensor(name)
			if err != nil {
				return nil, err
			}
			out = append(out, a)
		}
		return out, nil
	}
	var err1, err2 error
	ds.Inputs, err1 = take(inputs)
	ds.Labels, err2 = take(labels)
	if err := errors.Join(err1, err2); err != nil {
		sf.Close()
		return nil, fmt.Errorf("data.OpenSafetensorsDataset: %w", err)
	}
	all := append(append([]*NPYArray{}, ds.Inputs...), ds.Labels...)
	names := append(append([]string{}, inputs...), labels...)
	if len(all) == 0 {
		sf.Close()
		return nil, fmt.Errorf("data.OpenSafetensorsDataset: %s: no tensors named; the file has %q", path, sf.Names())
	}
	for i, a := range all[1:] {
		if a.Len() != all[0].Len() {
			sf.Close()
			return nil, fmt.Errorf("data.OpenSafetensorsDataset: %s: tensor %q has %d examples, tensor %q has %d",
				path, names[i+1], a.Len(), names[0], all[0].Len())
		}
	}
	return ds, nil
}

// Len implements Dataset.
func (d *SafetensorsDataset) Len() int {
	if len(d.Inputs) > 0 {
		return d.Inputs[0].Len()
	}
	return d.Labels[0].Len()
}

// Get implements Dataset.
func (d *SafetensorsDataset) Get(i int) (Example, error) {
	nd := NPYDataset{Inputs: d.Inputs, Labels: d.Labels}
	return nd.Get(i)
}

// Close unmaps the file.
func (d *SafetensorsDataset) Close() error { return d.File.Close() }
