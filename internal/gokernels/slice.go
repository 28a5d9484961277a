package gokernels

import (
	"reflect"
	"unsafe"
)

// execSlice runs a float32 Slice, copying runs of the innermost axis where
// its stride is 1; the backend copies element by element and steps an
// index per axis for each.
func execSlice(backend, node unsafe.Pointer, inputs []unsafe.Pointer, _ []bool) (unsafe.Pointer, error) {
	if !enabled.Load() {
		return nil, errFallback
	}
	data := nodeData(node)
	in := float32s(inputs[0])
	if in == nil || reflect.TypeOf(data) != lay.sliceData {
		return nil, errFallback
	}
	params := (*sliceParams)(dataPointer(data))
	dims := bufferShape(inputs[0]).Dimensions
	if len(dims) == 0 || len(params.starts) != len(dims) || len(params.strides) != len(dims) {
		return nil, errFallback
	}
	shape := nodeShape(node)
	output, err := getBuffer(backend, shape)
	if err != nil {
		return nil, err
	}
	out := float32s(output)[:shape.Size()]
	if len(out) == 0 {
		return output, nil
	}
	s := slicing{in: dims, out: shape.Dimensions, starts: params.starts, strides: params.strides}
	offset := 0
	for axis, start := range s.starts {
		offset += start * s.inStride(axis)
	}
	s.copyAxis(0, in[offset:], out)
	ran.Add(1)
	return output, nil
}

// slicing is a Slice's operand and output dimensions and its parameters.
type slicing struct {
	in, out         []int
	starts, strides []int
}

// inStride is the distance in the operand between neighbours along axis.
func (s slicing) inStride(axis int) int {
	return inSize(s.in[axis+1:])
}

// copyAxis copies the slice from axis on, whose first value is in[0], to
// out.
func (s slicing) copyAxis(axis int, in, out []float32) {
	n, step := s.out[axis], s.strides[axis]*s.inStride(axis)
	if axis == len(s.out)-1 {
		if step == 1 {
			copy(out[:n], in)
			return
		}
		for i := range n {
			out[i] = in[i*step]
		}
		return
	}
	if s.wholeFrom(axis+1) && s.strides[axis] == 1 {
		copy(out, in[:len(out)])
		return
	}
	outStride := len(out) / n
	for i := range n {
		s.copyAxis(axis+1, in[i*step:], out[i*outStride:(i+1)*outStride])
	}
}

// wholeFrom reports whether the slice takes every value of the axes from
// axis on, so that each of its rows there is one contiguous run.
func (s slicing) wholeFrom(axis int) bool {
	for a := axis; a < len(s.in); a++ {
		if s.starts[a] != 0 || s.out[a] != s.in[a] || s.strides[a] != 1 {
			return false
		}
	}
	return true
}
