package gokernels

import (
	"unsafe"
)

// execTranspose runs a float32 Transpose that, once runs of axes that stay
// together are merged, swaps the last two axes ([B,] R, C → [B,] C, R),
// which covers the channels-first ↔ channels-last moves of convolutions
// (the backend runs that move without a batch axis as a scalar tiled
// loop, and with one element by element).
func execTranspose(backend, node unsafe.Pointer, inputs []unsafe.Pointer, _ []bool) (unsafe.Pointer, error) {
	if !enabled.Load() {
		return nil, errFallback
	}
	perm, ok := nodeData(node).([]int)
	in := float32s(inputs[0])
	if !ok || in == nil {
		return nil, errFallback
	}
	batch, rows, cols, ok := swapOfLastTwo(bufferShape(inputs[0]).Dimensions, perm)
	if !ok {
		return nil, errFallback
	}
	output, err := getBuffer(backend, nodeShape(node))
	if err != nil {
		return nil, err
	}
	out := float32s(output)
	size := rows * cols
	for b := range batch {
		transpose2D(in[b*size:(b+1)*size], out[b*size:(b+1)*size], rows, cols)
	}
	ran.Add(1)
	return output, nil
}

// swapOfLastTwo merges the runs of axes that perm keeps together and in
// order and reports whether what is left is [batch, rows, cols] → [batch,
// cols, rows] (batch 1 when there is no batch axis) with rows and cols
// above 1.
func swapOfLastTwo(dims, perm []int) (batch, rows, cols int, ok bool) {
	// Axes of size 1 move nothing: drop them and renumber the others.
	var kept [8]int
	if len(perm) > len(kept) {
		return 0, 0, 0, false
	}
	k := 0
	for _, axis := range perm {
		if dims[axis] == 1 {
			continue
		}
		below := 0
		for a := range axis {
			if dims[a] == 1 {
				below++
			}
		}
		kept[k] = axis - below
		k++
	}
	perm = kept[:k]
	var sq [8]int
	n := 0
	for _, d := range dims {
		if d != 1 {
			sq[n] = d
			n++
		}
	}
	dims = sq[:n]

	// Groups of output axes whose input axes are consecutive.
	type group struct{ first, size int } // first input axis, merged size
	var groups [8]group
	n = 0
	for i := 0; i < len(perm); {
		j := i + 1
		for j < len(perm) && perm[j] == perm[j-1]+1 {
			j++
		}
		if n == len(groups) {
			return 0, 0, 0, false
		}
		size := 1
		for _, axis := range perm[i:j] {
			size *= dims[axis]
		}
		groups[n] = group{perm[i], size}
		n++
		i = j
	}
	switch {
	case n == 2 && groups[0].first > groups[1].first:
		return 1, groups[1].size, groups[0].size, groups[0].size > 1 && groups[1].size > 1
	case n == 3 && groups[0].first == 0 && groups[1].first > groups[2].first:
		return groups[0].size, groups[2].size, groups[1].size, groups[1].size > 1 && groups[2].size > 1
	}
	return 0, 0, 0, false
}

// transposeBlock is the side of the square blocks transpose2D moves: a
// block's rows and columns stay in cache while they are read and written.
const transposeBlock = 32

// transpose2D writes the rows×cols row-major matrix in as its transpose,
// cols×rows, in out.
func transpose2D(in, out []float32, rows, cols int) {
	if len(in) < rows*cols || len(out) < rows*cols {
		panic("gokernels: transpose2D: slices shorter than the matrix")
	}
	src, dst := unsafe.Pointer(unsafe.SliceData(in)), unsafe.Pointer(unsafe.SliceData(out))
	for r0 := 0; r0 < rows; r0 += transposeBlock {
		r1 := min(r0+transposeBlock, rows)
		for c0 := 0; c0 < cols; c0 += transposeBlock {
			c1 := min(c0+transposeBlock, cols)
			transposeTile(src, dst, rows, cols, r0, r1, c0, c1)
		}
	}
}

// transposeTile moves rows r0..r1 and columns c0..c1 of the rows×cols
// matrix at src to the transposed matrix at dst, four rows at a time.
func transposeTile(src, dst unsafe.Pointer, rows, cols, r0, r1, c0, c1 int) {
	const f = 4 // bytes per float32
	r := r0
	for ; r+4 <= r1; r += 4 {
		s0 := unsafe.Add(src, (r*cols+c0)*f)
		s1 := unsafe.Add(s0, cols*f)
		s2 := unsafe.Add(s1, cols*f)
		s3 := unsafe.Add(s2, cols*f)
		d := unsafe.Add(dst, (c0*rows+r)*f)
		for c := c0; c < c1; c++ {
			o := (*[4]float32)(d)
			o[0] = *(*float32)(s0)
			o[1] = *(*float32)(s1)
			o[2] = *(*float32)(s2)
			o[3] = *(*float32)(s3)
			s0, s1, s2, s3 = unsafe.Add(s0, f), unsafe.Add(s1, f), unsafe.Add(s2, f), unsafe.Add(s3, f)
			d = unsafe.Add(d, rows*f)
		}
	}
	for ; r < r1; r++ {
		s := unsafe.Add(src, (r*cols+c0)*f)
		d := unsafe.Add(dst, (c0*rows+r)*f)
		for c := c0; c < c1; c++ {
			*(*float32)(d) = *(*float32)(s)
			s = unsafe.Add(s, f)
			d = unsafe.Add(d, rows*f)
		}
	}
}
