// Command gorgonnxrun runs an ONNX model in onnx-go's Gorgonia backend
// (github.com/owulveryck/onnx-go, backend/x/gorgonnx), a runtime
// independent of volt and GoMLX: volt's ONNX export tests run it on the
// models they export. It is a module of its own because Gorgonia v0.9.4
// needs an older gorgonia.org/tensor than the gonnx runtime volt's tests
// also use.
//
//	gorgonnxrun MODEL.onnx INPUT.f32 D0,D1,... OUTPUT.f32
//
// INPUT.f32 holds the model's one float32 input, little-endian, of the
// dimensions given; OUTPUT.f32 receives the first output the same way, and
// its dimensions are printed on stdout.
package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	onnx "github.com/owulveryck/onnx-go"
	"github.com/owulveryck/onnx-go/backend/x/gorgonnx"
	"gorgonia.org/tensor"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gorgonnxrun:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 4 {
		return fmt.Errorf("usage: gorgonnxrun MODEL.onnx INPUT.f32 D0,D1,... OUTPUT.f32")
	}
	model, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(args[1])
	if err != nil {
		return err
	}
	var dims []int
	for _, d := range strings.Split(args[2], ",") {
		n, err := strconv.Atoi(d)
		if err != nil {
			return fmt.Errorf("dimensions %q: %w", args[2], err)
		}
		dims = append(dims, n)
	}
	flat := make([]float32, len(raw)/4)
	for i := range flat {
		flat[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	backend := gorgonnx.NewGraph()
	m := onnx.NewModel(backend)
	if err := m.UnmarshalBinary(model); err != nil {
		return fmt.Errorf("reading %s: %w", args[0], err)
	}
	if err := m.SetInput(0, tensor.New(tensor.WithShape(dims...), tensor.WithBacking(flat))); err != nil {
		return err
	}
	if err := backend.Run(); err != nil {
		return fmt.Errorf("running: %w", err)
	}
	outs, err := m.GetOutputTensors()
	if err != nil {
		return err
	}
	if len(outs) == 0 {
		return fmt.Errorf("the model has no outputs")
	}
	out := outs[0]
	vals, ok := out.Data().([]float32)
	if !ok {
		return fmt.Errorf("output 0 is %T, not float32", out.Data())
	}
	b := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	if err := os.WriteFile(args[3], b, 0o644); err != nil {
		return err
	}
	fmt.Println(out.Shape())
	return nil
}
