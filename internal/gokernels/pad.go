package gokernels

import (
	"reflect"
	"unsafe"

	"github.com/gomlx/compute"
)

// execPad runs a float32 Pad without interior padding or crops: it writes
// the fill value on the edges only and copies the operand's rows, where
// the backend fills the whole output first and copies element rows after.
func execPad(backend, node unsafe.Pointer, inputs []unsafe.Pointer, _ []bool) (unsafe.Pointer, error) {
	if !enabled.Load() {
		return nil, errFallback
	}
	data := nodeData(node)
	in, fill := float32s(inputs[0]), float32s(inputs[1])
	if in == nil || len(fill) != 1 || reflect.TypeOf(data) != lay.padData {
		return nil, errFallback
	}
	params := (*padParams)(dataPointer(data))
	dims := bufferShape(inputs[0]).Dimensions
	if len(params.axes) != len(dims) || len(dims) == 0 || len(dims) > maxPadRank {
		return nil, errFallback
	}
	for _, a := range params.axes {
		if a.Interior != 0 || a.Start < 0 || a.End < 0 {
			return nil, errFallback
		}
	}
	output, err := getBuffer(backend, nodeShape(node))
	if err != nil {
		return nil, err
	}
	out := float32s(output)
	padded := padPlan(dims, params.axes)
	padAxis(&padded, 0, in[:inSize(dims)], out[:padded.outSize()], fill[0])
	ran.Add(1)
	return output, nil
}

// maxPadRank is the largest rank execPad takes (padding's arrays).
const maxPadRank = 8

// padding is a Pad with the unpadded trailing axes merged into the last,
// in arrays rather than slices so that an execution allocates nothing.
type padding struct {
	rank int
	dims [maxPadRank]int             // the operand's dimensions
	axes [maxPadRank]compute.PadAxis // the padding of each
}

// padPlan merges the trailing axes Pad leaves alone into one, so that
// the innermost copies are as long as they can be.
func padPlan(dims []int, axes []compute.PadAxis) padding {
	last := len(dims) - 1 // the last padded axis
	for last > 0 && axes[last] == (compute.PadAxis{}) {
		last--
	}
	var p padding
	p.rank = copy(p.dims[:], dims[:last+1])
	copy(p.axes[:], axes[:last+1])
	if last < len(dims)-1 { // the merged untouched axes
		p.dims[p.rank] = inSize(dims[last+1:])
		p.rank++
	}
	return p
}

// outSize is the padded output's size.
func (p *padding) outSize() int {
	n := 1
	for i, d := range p.dims[:p.rank] {
		n *= d + p.axes[i].Start + p.axes[i].End
	}
	return n
}

// padAxis writes in, padded from axis on, to out.
func padAxis(p *padding, axis int, in, out []float32, fill float32) {
	d, a := p.dims[axis], p.axes[axis]
	if axis == p.rank-1 {
		fillWith(out[:a.Start], fill)
		copy(out[a.Start:a.Start+d], in)
		fillWith(out[a.Start+d:], fill)
		return
	}
	inStride, outStride := len(in)/d, len(out)/(d+a.Start+a.End)
	if axis == p.rank-2 && p.axes[axis+1] == (compute.PadAxis{}) {
		// Whole rows: one copy for the middle.
		fillWith(out[:a.Start*outStride], fill)
		copy(out[a.Start*outStride:], in)
		fillWith(out[(a.Start+d)*outStride:], fill)
		return
	}
	fillWith(out[:a.Start*outStride], fill)
	for i := range d {
		padAxis(p, axis+1, in[i*inStride:(i+1)*inStride], out[(a.Start+i)*outStride:(a.Start+i+1)*outStride], fill)
	}
	fillWith(out[(a.Start+d)*outStride:], fill)
}

// fillWith sets every value of s to v.
func fillWith(s []float32, v float32) {
	if v == 0 {
		clear(s)
		return
	}
	for i := range s {
		s[i] = v
	}
}

// inSize is the number of values of a tensor with these dimensions.
func inSize(dims []int) int {
	n := 1
	for _, d := range dims {
		n *= d
	}
	return n
}
