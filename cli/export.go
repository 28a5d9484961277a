package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/gomlx/compute/shapes"
	"github.com/voltml/volt"
	"google.golang.org/protobuf/proto"
)

// exportUsage writes the head of "export --help".
func exportUsage(w io.Writer, program string) {
	fmt.Fprintf(w, `Usage: %[1]s export --onnx FILE.onnx --input-shape DIMS... [--config FILE]... [--KEY=VALUE]... FILE.ckpt

Writes the module's PredictStep, with the weights of FILE.ckpt (or
--ckpt-path), as an ONNX model (opset %[2]d; Lightning's to_onnx). The module
is built from the config as for predict; the checkpoint's hyper-parameters
set its fields. Give one --input-shape per input of the batch, the
dimensions after the batch axis:

  %[1]s export --onnx model.onnx --input-shape 784 volt_logs/version_0/checkpoints/epoch=4-step=4300.ckpt

The batch axis is dynamic when the traced graph allows it; otherwise the
model takes the traced batch size (--batch-size) only, and the line printed
says why.

`, program, volt.ONNXOpset)
}

// runExport exports the module with the checkpoint and flags of inv, and
// prints one line describing the file written.
func runExport(inv *invocation, st *settings, m volt.Module) error {
	req := inv.export
	var buf bytes.Buffer
	info, err := volt.ExportONNX(&buf, inv.rc.ckptPath, m, req.inputs, req.opts...)
	if err != nil {
		return err
	}
	if err := writeNew(req.path, buf.Bytes(), req.over); err != nil {
		return err
	}
	fmt.Fprintln(st.stdout, describeExport(req.path, info, buf.Bytes()))
	return nil
}

// writeNew writes data to path through a temporary file in the same
// directory, renamed into place once complete: a failed write leaves
// nothing. Without overwrite, an existing path is refused, also one that
// appeared while the model was written.
func writeNew(path string, data []byte, overwrite bool) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	name := tmp.Name()
	committed := false
	defer func() {
		if !committed {
			os.Remove(name) // the temporary file is ours
		}
	}()
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if overwrite {
		if err := os.Rename(name, path); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		committed = true
		return nil
	}
	// A hard link fails if path exists, where a rename would replace it.
	switch err := os.Link(name, path); {
	case errors.Is(err, fs.ErrExist):
		return &Error{Origin: "flag --onnx", Problem: fmt.Sprintf("%s exists; volt does not replace a file it did not write: pass --overwrite to replace it, or give another path", path)}
	case err != nil:
		// No hard links on this file system: check, then rename.
		if _, serr := os.Lstat(path); serr == nil {
			return &Error{Origin: "flag --onnx", Problem: fmt.Sprintf("%s exists; volt does not replace a file it did not write: pass --overwrite to replace it, or give another path", path)}
		}
		if err := os.Rename(name, path); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		committed = true
	}
	return nil
}

// describeExport is the line export prints: the file, the opset, the
// inputs and outputs with the shapes the file declares, and whether the
// batch axis is dynamic.
func describeExport(path string, info *volt.ONNXExport, model []byte) string {
	declared := map[string]string{}
	var mp onnx.ModelProto
	if proto.Unmarshal(model, &mp) == nil && mp.Graph != nil {
		for _, v := range append(append([]*onnx.ValueInfoProto{}, mp.Graph.Input...), mp.Graph.Output...) {
			declared[v.Name] = declaredDims(v)
		}
	}
	values := func(names []string, ss []shapes.Shape) string {
		parts := make([]string, len(names))
		for i, n := range names {
			dims, ok := declared[n]
			if !ok && i < len(ss) {
				dims = fmt.Sprint(ss[i].Dimensions)
			}
			dt := ""
			if i < len(ss) {
				dt = strings.ToLower(ss[i].DType.String())
			}
			parts[i] = n + " " + dt + dims
		}
		return strings.Join(parts, ", ")
	}
	plural := func(word string, n int) string {
		if n == 1 {
			return word
		}
		return word + "s"
	}
	line := fmt.Sprintf("wrote %s (ONNX opset %d): %s %s -> %s %s; ", path, info.Opset,
		plural("input", len(info.Inputs)), values(info.Inputs, info.InputShapes),
		plural("output", len(info.Outputs)), values(info.Outputs, info.OutputShapes))
	if info.DynamicBatch {
		return line + `batch axis dynamic ("batch")`
	}
	batch := 0
	if len(info.InputShapes) > 0 && info.InputShapes[0].Rank() > 0 {
		batch = info.InputShapes[0].Dimensions[0]
	}
	return line + fmt.Sprintf("batch axis fixed at %d (one shape per export; --batch-size sets it): %s", batch, info.FixedReason)
}

// declaredDims shows the dimensions a graph input or output declares, a
// symbolic one by its name: [batch,784].
func declaredDims(v *onnx.ValueInfoProto) string {
	t := v.GetType().GetTensorType()
	if t == nil || t.Shape == nil {
		return "[?]"
	}
	dims := make([]string, len(t.Shape.Dim))
	for i, d := range t.Shape.Dim {
		if p := d.GetDimParam(); p != "" {
			dims[i] = p
		} else {
			dims[i] = strconv.FormatInt(d.GetDimValue(), 10)
		}
	}
	return "[" + strings.Join(dims, ",") + "]"
}
