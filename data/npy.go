package data

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/edsrzf/mmap-go"
)

// NPYArray is an array of a .npy file (numpy's format, versions 1 to 3),
// memory-mapped: reading example i (the sub-array at index i of the first
// axis) touches only its bytes. Every numeric dtype numpy writes is read,
// in either byte order and in C or Fortran order, as the Field type that
// holds it exactly: bool as []bool, uint8 as []uint8, int8, int16, uint16
// and int32 as []int32, uint32 and int64 as []int64, uint64 as []int64 (a
// value over 2^63-1 is an error naming it), float16 and float32 as
// []float32, float64 as []float64. Complex, string, structured and object
// arrays are refused when opened, as is a 0-d array (no example axis).
type NPYArray struct {
	// Path is the file's path.
	Path string
	// Descr is the numpy dtype description, such as "<f4".
	Descr string
	// Shape is the array's shape; Shape[0] is the number of examples.
	Shape []int
	// Fortran reports whether the data is in Fortran (column-major) order.
	Fortran bool

	mapped mmap.MMap
	file   *os.File
	data   []byte // the array's bytes, after the header
	size   int    // bytes per element
	kind   byte   // 'b', 'i', 'u' or 'f'
	order  binary.ByteOrder
	label  string // names the array in errors; "" means "data.NPYArray <Path>"
}

// describe names the array in errors.
func (a *NPYArray) describe() string {
	if a.label != "" {
		return a.label
	}
	return "data.NPYArray " + a.Path
}

// npyMagic starts every .npy file.
var npyMagic = []byte("\x93NUMPY")

// The header's fields (a Python dict literal).
var (
	npyDescr   = regexp.MustCompile(`'descr'\s*:\s*'([^']*)'`)
	npyFortran = regexp.MustCompile(`'fortran_order'\s*:\s*(True|False)`)
	npyShape   = regexp.MustCompile(`'shape'\s*:\s*\(([^)]*)\)`)
)

// OpenNPY memory-maps the .npy file at path. Close it when done.
func OpenNPY(path string) (*NPYArray, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data.OpenNPY: %w", err)
	}
	a, err := openNPY(f, path)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("data.OpenNPY: %s: %w", path, err)
	}
	return a, nil
}

// openNPY maps f and parses its header.
func openNPY(f *os.File, path string) (*NPYArray, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if info.Size() < 10 {
		return nil, fmt.Errorf("not a .npy file: %d bytes, shorter than the 10-byte preamble", info.Size())
	}
	a := &NPYArray{Path: path, file: f}
	a.mapped, err = mmap.Map(f, mmap.RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("memory-mapping: %w", err)
	}
	if err := a.parse(a.mapped); err != nil {
		a.mapped.Unmap()
		return nil, err
	}
	return a, nil
}

// parse reads the header of raw (the whole file) and checks the data's
// length.
func (a *NPYArray) parse(raw []byte) error {
	if !bytes.HasPrefix(raw, npyMagic) {
		return fmt.Errorf("not a .npy file: it starts with %q, not numpy's magic \"\\x93NUMPY\"", raw[:min(6, len(raw))])
	}
	major := raw[6]
	var headerLen, start int
	switch major {
	case 1:
		headerLen, start = int(binary.LittleEndian.Uint16(raw[8:10])), 10
	case 2, 3:
		if len(raw) < 12 {
			return errors.New("truncated: the file ends inside its preamble")
		}
		headerLen, start = int(binary.LittleEndian.Uint32(raw[8:12])), 12
	default:
		return fmt.Errorf("format version %d.%d is not one of 1.0, 2.0, 3.0", major, raw[7])
	}
	if start+headerLen > len(raw) {
		return fmt.Errorf("truncated: the header is %d bytes, the file ends after %d", headerLen, len(raw)-start)
	}
	header := string(raw[start : start+headerLen])
	if err := a.parseHeader(header); err != nil {
		return fmt.Errorf("header %s: %w", strings.TrimSpace(header), err)
	}
	a.data = raw[start+headerLen:]
	want := a.size
	for _, d := range a.Shape {
		want *= d
	}
	if len(a.data) < want {
		return fmt.Errorf("truncated: shape %v of %s needs %d bytes of data, the file has %d after its header",
			a.Shape, a.Descr, want, len(a.data))
	}
	a.data = a.data[:want]
	return nil
}

// parseHeader reads the dtype, order and shape of the header dict.
func (a *NPYArray) parseHeader(header string) error {
	m := npyDescr.FindStringSubmatch(header)
	if m == nil {
		return errors.New("no 'descr' string: structured dtypes (a list of fields) are not supported; save each field as its own array")
	}
	a.Descr = m[1]
	if m := npyFortran.FindStringSubmatch(header); m == nil {
		return errors.New("no 'fortran_order'")
	} else {
		a.Fortran = m[1] == "True"
	}
	m = npyShape.FindStringSubmatch(header)
	if m == nil {
		return errors.New("no 'shape' tuple")
	}
	for _, d := range strings.Split(m[1], ",") {
		if d = strings.TrimSpace(d); d == "" {
			continue
		}
		v, err := strconv.Atoi(d)
		if err != nil || v < 0 {
			return fmt.Errorf("shape dimension %q is not a non-negative integer", d)
		}
		a.Shape = append(a.Shape, v)
	}
	if len(a.Shape) == 0 {
		return errors.New("a 0-d array has no example axis; save an array of shape (n, ...)")
	}
	return a.parseDescr()
}

// parseDescr reads a dtype description such as "<f4".
func (a *NPYArray) parseDescr() error {
	d := a.Descr
	if len(d) < 3 {
		return fmt.Errorf("dtype %q is not a numeric dtype", d)
	}
	switch d[0] {
	case '<', '|', '=':
		a.order = binary.LittleEndian
	case '>':
		a.order = binary.BigEndian
	default:
		return fmt.Errorf("dtype %q: byte order %q is not one of < > | =", d, d[0])
	}
	size, err := strconv.Atoi(d[2:])
	if err != nil {
		return fmt.Errorf("dtype %q is not a numeric dtype", d)
	}
	a.kind, a.size = d[1], size
	ok := false
	switch a.kind {
	case 'b':
		ok = size == 1
	case 'i', 'u':
		ok = size == 1 || size == 2 || size == 4 || size == 8
	case 'f':
		ok = size == 2 || size == 4 || size == 8
	}
	if !ok {
		return fmt.Errorf("dtype %q has no volt field type: the numeric dtypes are bool, int8-64, uint8-64 and float16-64 (complex, string and object arrays are not read)", d)
	}
	return nil
}

// Len returns the number of examples, Shape[0].
func (a *NPYArray) Len() int { return a.Shape[0] }

// Close unmaps the file.
func (a *NPYArray) Close() error {
	err := a.mapped.Unmap()
	return errors.Join(err, a.file.Close())
}

// Field returns example i: the sub-array at index i of the first axis, of
// shape Shape[1:].
func (a *NPYArray) Field(i int) (Field, error) {
	if i < 0 || i >= a.Len() {
		return Field{}, fmt.Errorf("%s: example %d out of range [0, %d)", a.describe(), i, a.Len())
	}
	per := 1
	for _, d := range a.Shape[1:] {
		per *= d
	}
	// offsets[j] is the element index of the example's element j (C order).
	elem := func(j int) int { return i*per + j }
	if a.Fortran && len(a.Shape) > 1 {
		elem = func(j int) int {
			// j's C-order index over Shape[1:], as a Fortran-order offset.
			off, stride := i, a.Shape[0]
			rest := a.Shape[1:]
			idx := make([]int, len(rest))
			for k := len(rest) - 1; k >= 0; k-- {
				idx[k] = j % rest[k]
				j /= rest[k]
			}
			for k, v := range idx {
				off += v * stride
				stride *= rest[k]
			}
			return off
		}
	}
	shape := append([]int{}, a.Shape[1:]...)
	bytesAt := func(j int) []byte { e := elem(j); return a.data[e*a.size : (e+1)*a.size] }
	switch {
	case a.kind == 'b':
		v := make([]bool, per)
		for j := range v {
			v[j] = bytesAt(j)[0] != 0
		}
		return Field{Value: v, Shape: shape}, nil
	case a.kind == 'u' && a.size == 1:
		v := make([]uint8, per)
		for j := range v {
			v[j] = bytesAt(j)[0]
		}
		return Field{Value: v, Shape: shape}, nil
	case a.kind == 'f' && a.size == 8:
		v := make([]float64, per)
		for j := range v {
			v[j] = math.Float64frombits(a.order.Uint64(bytesAt(j)))
		}
		return Field{Value: v, Shape: shape}, nil
	case a.kind == 'f' || a.kind == bfloat16Kind:
		v := make([]float32, per)
		for j := range v {
			if a.kind == bfloat16Kind {
				v[j] = math.Float32frombits(uint32(a.order.Uint16(bytesAt(j))) << 16)
			} else if a.size == 4 {
				v[j] = math.Float32frombits(a.order.Uint32(bytesAt(j)))
			} else {
				v[j] = halfToFloat32(a.order.Uint16(bytesAt(j)))
			}
		}
		return Field{Value: v, Shape: shape}, nil
	case a.size <= 2 || a.kind == 'i' && a.size == 4:
		v := make([]int32, per)
		for j := range v {
			v[j] = int32(a.integer(bytesAt(j)))
		}
		return Field{Value: v, Shape: shape}, nil
	}
	v := make([]int64, per)
	for j := range v {
		b := bytesAt(j)
		if a.kind == 'u' && a.size == 8 {
			if u := a.order.Uint64(b); u > math.MaxInt64 {
				return Field{}, fmt.Errorf("%s: example %d, element %d: uint64 %d does not fit in int64", a.describe(), i, j, u)
			}
		}
		v[j] = a.integer(b)
	}
	return Field{Value: v, Shape: shape}, nil
}

// integer decodes one integer element.
func (a *NPYArray) integer(b []byte) int64 {
	signed := a.kind == 'i'
	switch a.size {
	case 1:
		if signed {
			return int64(int8(b[0]))
		}
		return int64(b[0])
	case 2:
		if signed {
			return int64(int16(a.order.Uint16(b)))
		}
		return int64(a.order.Uint16(b))
	case 4:
		if signed {
			return int64(int32(a.order.Uint32(b)))
		}
		return int64(a.order.Uint32(b))
	}
	return int64(a.order.Uint64(b))
}

// halfToFloat32 converts an IEEE 754 binary16 value.
func halfToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := int(h>>10) & 0x1f
	frac := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f: // inf, NaN
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: frac · 2^-24
		f := float32(frac) / (1 << 24)
		if sign != 0 {
			return -f
		}
		return f
	}
	return math.Float32frombits(sign | uint32(exp-15+127)<<23 | frac<<13)
}

// NPYDataset is a map-style Dataset over .npy arrays: example i holds row i
// of each input array and of each label array. Open it with OpenNPYDataset
// and Close it when done.
type NPYDataset struct {
	Inputs, Labels []*NPYArray
}

var _ Dataset = (*NPYDataset)(nil)

// OpenNPYDataset memory-maps the input and label .npy files, which must
// have the same number of examples (Shape[0]).
func OpenNPYDataset(inputs, labels []string) (*NPYDataset, error) {
	ds := &NPYDataset{}
	open := func(paths []string) ([]*NPYArray, error) {
		var out []*NPYArray
		for _, p := range paths {
			a, err := OpenNPY(p)
			if err != nil {
				return out, err
			}
			out = append(out, a)
		}
		return out, nil
	}
	var err1, err2 error
	ds.Inputs, err1 = open(inputs)
	if err1 == nil {
		ds.Labels, err2 = open(labels)
	}
	if err := errors.Join(err1, err2); err != nil {
		ds.Close()
		return nil, err
	}
	all := append(append([]*NPYArray{}, ds.Inputs...), ds.Labels...)
	if len(all) == 0 {
		return nil, errors.New("data.OpenNPYDataset: no files")
	}
	for _, a := range all[1:] {
		if a.Len() != all[0].Len() {
			ds.Close()
			return nil, fmt.Errorf("data.OpenNPYDataset: %s has %d examples, %s has %d", a.Path, a.Len(), all[0].Path, all[0].Len())
		}
	}
	return ds, nil
}

// Len implements Dataset.
func (d *NPYDataset) Len() int {
	if len(d.Inputs) > 0 {
		return d.Inputs[0].Len()
	}
	if len(d.Labels) > 0 {
		return d.Labels[0].Len()
	}
	return 0
}

// Get implements Dataset.
func (d *NPYDataset) Get(i int) (Example, error) {
	var ex Example
	for _, a := range d.Inputs {
		f, err := a.Field(i)
		if err != nil {
			return Example{}, err
		}
		ex.Inputs = append(ex.Inputs, f)
	}
	for _, a := range d.Labels {
		f, err := a.Field(i)
		if err != nil {
			return Example{}, err
		}
		ex.Labels = append(ex.Labels, f)
	}
	return ex, nil
}

// Close unmaps every file.
func (d *NPYDataset) Close() error {
	var errs []error
	for _, a := range append(append([]*NPYArray{}, d.Inputs...), d.Labels...) {
		errs = append(errs, a.Close())
	}
	return errors.Join(errs...)
}
