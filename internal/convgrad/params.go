package convgrad

import (
	"reflect"

	"github.com/gomlx/compute/shapeinference"
	"github.com/gomlx/gomlx/core/graph"
)

// convParams are a ConvGeneral node's static parameters.
type convParams struct {
	axes                            graph.ConvolveAxesConfig
	strides                         []int
	paddings                        [][2]int
	inputDilations, kernelDilations []int
	channelGroups, batchGroups      int
}

func (p convParams) stride(axis int) int         { return at(p.strides, axis) }
func (p convParams) inputDilation(axis int) int  { return at(p.inputDilations, axis) }
func (p convParams) kernelDilation(axis int) int { return at(p.kernelDilations, axis) }

// padding is the forward padding of a spatial axis (none when unset).
func (p convParams) padding(axis int) [2]int {
	if len(p.paddings) == 0 {
		return [2]int{}
	}
	return p.paddings[axis]
}

// at is values[axis], or 1 when values is unset (GoMLX's convention for
// strides and dilations).
func at(values []int, axis int) int {
	if len(values) == 0 {
		return 1
	}
	return values[axis]
}

// hasEvenKernel reports whether a spatial axis of the kernel (dimensions
// kernelDims) has an even effective size, where GoMLX's input gradient is
// off by one.
func (p convParams) hasEvenKernel(kernelDims []int) bool {
	for i, axis := range p.axes.KernelSpatial {
		if effectiveSize(kernelDims[axis], p.kernelDilation(i))%2 == 0 {
			return true
		}
	}
	return false
}

// readParams reads node's parameters from GoMLX's unexported
// nodeInputsConvGeneral (fields axes, strides, paddings, inputDilations,
// kernelDilations, channelGroupCount, batchGroupCount); false if node is
// not a ConvGeneral or the fields are not laid out so.
func readParams(node *graph.Node) (p convParams, ok bool) {
	if node == nil || node.Type() != graph.NodeTypeConvGeneral {
		return p, false
	}
	p, ok = readParamsValue(reflect.ValueOf(node))
	if !ok || !p.reproducesShape(node) {
		return convParams{}, false
	}
	return p, true
}

// readParamsValue is readParams on a *graph.Node held in a reflect.Value.
func readParamsValue(node reflect.Value) (p convParams, ok bool) {
	defer func() {
		if recover() != nil {
			p, ok = convParams{}, false
		}
	}()
	inputs := node.Elem().FieldByName("inputs")
	if inputs.Kind() != reflect.Interface || inputs.IsNil() {
		return p, false
	}
	s := inputs.Elem()
	if s.Kind() == reflect.Pointer {
		s = s.Elem()
	}
	if s.Kind() != reflect.Struct {
		return p, false
	}
	axes := s.FieldByName("axes")
	p.axes = graph.ConvolveAxesConfig{
		InputBatch:           intField(axes, "InputBatch"),
		InputChannels:        intField(axes, "InputChannels"),
		InputSpatial:         ints(axes.FieldByName("InputSpatial")),
		KernelInputChannels:  intField(axes, "KernelInputChannels"),
		KernelOutputChannels: intField(axes, "KernelOutputChannels"),
		KernelSpatial:        ints(axes.FieldByName("KernelSpatial")),
		OutputBatch:          intField(axes, "OutputBatch"),
		OutputChannels:       intField(axes, "OutputChannels"),
		OutputSpatial:        ints(axes.FieldByName("OutputSpatial")),
	}
	p.strides = ints(s.FieldByName("strides"))
	p.inputDilations = ints(s.FieldByName("inputDilations"))
	p.kernelDilations = ints(s.FieldByName("kernelDilations"))
	if pads := s.FieldByName("paddings"); pads.Len() > 0 {
		p.paddings = make([][2]int, pads.Len())
		for i := range p.paddings {
			p.paddings[i] = [2]int{int(pads.Index(i).Index(0).Int()), int(pads.Index(i).Index(1).Int())}
		}
	}
	p.channelGroups = intField(s, "channelGroupCount")
	p.batchGroups = intField(s, "batchGroupCount")
	spatial := len(p.axes.InputSpatial)
	for _, values := range [][]int{p.strides, p.inputDilations, p.kernelDilations} {
		if len(values) != 0 && len(values) != spatial {
			return convParams{}, false
		}
	}
	if (len(p.paddings) != 0 && len(p.paddings) != spatial) ||
		len(p.axes.KernelSpatial) != spatial || len(p.axes.OutputSpatial) != spatial {
		return convParams{}, false
	}
	return p, true
}

// reproducesShape reports whether p, applied to node's operands, gives
// node's output shape: a check that the fields were read as meant.
func (p convParams) reproducesShape(node *graph.Node) bool {
	in := node.Inputs()
	if len(in) != 2 {
		return false
	}
	shape, err := shapeinference.ConvGeneral(in[0].Shape(), in[1].Shape(), p.axes, p.strides, p.paddings,
		p.inputDilations, p.kernelDilations, p.channelGroups, p.batchGroups)
	return err == nil && shape.Equal(node.Shape())
}

// intField is the int field name of struct s (a reflection panic, which
// readParamsValue recovers, if there is none).
func intField(s reflect.Value, name string) int { return int(s.FieldByName(name).Int()) }

// ints copies an []int read by reflection.
func ints(v reflect.Value) []int {
	if v.Len() == 0 {
		return nil
	}
	out := make([]int, v.Len())
	for i := range out {
		out[i] = int(v.Index(i).Int())
	}
	return out
}
