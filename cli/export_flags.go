package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gomlx/compute/dtypes"
	"github.com/spf13/pflag"
	"github.com/voltml/volt"
)

// cmdExport writes the module's predict step as an ONNX model.
const cmdExport = "export"

// ckptArgOrigin names the positional checkpoint argument of export in
// messages.
const ckptArgOrigin = "argument FILE.ckpt"

// exportFlags are the flags only export takes (the keys, --config and
// --ckpt-path are every subcommand's).
type exportFlags struct {
	onnx      string   // --onnx: the file to write
	shapes    []string // --input-shape, one per input, in order
	dtypes    []string // --input-dtype: none, one for all, or one per input
	names     []string // --input-name: none or one per input
	output    string   // --output-name
	batchSize int      // --batch-size: the batch the step is traced at
	overwrite bool     // --overwrite: replace an existing --onnx file
	ckpt      string   // the positional FILE.ckpt
}

// exportFlagNames are the flags of exportFlags, for suggestions.
var exportFlagNames = []string{"onnx", "input_shape", "input_dtype", "input_name", "output_name", "batch_size", "overwrite"}

// inputDTypes are the dtypes --input-dtype takes.
var inputDTypes = map[string]dtypes.DType{
	"float32": dtypes.Float32, "float64": dtypes.Float64, "float16": dtypes.Float16, "bfloat16": dtypes.BFloat16,
	"int8": dtypes.Int8, "int16": dtypes.Int16, "int32": dtypes.Int32, "int64": dtypes.Int64,
	"uint8": dtypes.Uint8, "bool": dtypes.Bool,
}

// dtypeNames lists inputDTypes' names, sorted.
func dtypeNames() string {
	var ns []string
	for n := range inputDTypes {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return strings.Join(ns, ", ")
}

// addFlags adds export's own flags to fs.
func (e *exportFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&e.onnx, "onnx", "", "the ONNX file to write (required); an existing file is refused unless --overwrite")
	fs.StringArrayVar(&e.shapes, "input_shape", nil, `the dimensions of an input after the batch axis, comma-separated ("784", "1,28,28"; "" for a [batch] input); required, once per input of the batch, in order (checkpoints do not record them)`)
	fs.StringArrayVar(&e.dtypes, "input_dtype", nil, "the dtype of the inputs ("+dtypeNames()+"): once for all, or once per --input-shape; default float32")
	fs.StringArrayVar(&e.names, "input_name", nil, `the name of an input in the ONNX graph, once per --input-shape; default "input" ("input_0", "input_1", … for several)`)
	fs.StringVar(&e.output, "output_name", "output", "the name of the output (the prediction) in the ONNX graph")
	fs.IntVar(&e.batchSize, "batch_size", 1, "the batch size the step is traced at: the only one a model whose batch axis cannot be dynamic takes")
	fs.BoolVar(&e.overwrite, "overwrite", false, "replace the --onnx file if it exists")
}

// parseShape reads the text of one --input-shape: positive integers
// separated by commas, or "" for no dimensions after the batch axis.
func parseShape(text string) ([]int, error) {
	t := strings.TrimSpace(text)
	if t == "" {
		return nil, nil
	}
	parts := strings.Split(t, ",")
	dims := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q: want positive integers separated by commas, the dimensions after the batch axis (784, or 1,28,28 for [batch, 1, 28, 28])", text)
		}
		dims[i] = n
	}
	return dims, nil
}

// exportRequest is a checked export command line.
type exportRequest struct {
	path   string // the --onnx file
	inputs []volt.InputSpec
	opts   []volt.ONNXOption
	over   bool
}

// request checks the flags and returns what to export, or every problem,
// each naming its flag.
func (e *exportFlags) request() (*exportRequest, error) {
	var errs []error
	bad := func(flag, format string, args ...any) {
		errs = append(errs, &Error{Origin: "flag --" + flag, Problem: fmt.Sprintf(format, args...)})
	}
	r := &exportRequest{path: e.onnx, over: e.overwrite}
	if e.onnx == "" {
		bad("onnx", "missing: give the file to write, e.g. --onnx model.onnx")
	} else if err := checkOutputPath(e.onnx, e.overwrite); err != nil {
		bad("onnx", "%v", err)
	}
	if len(e.shapes) == 0 {
		bad("input-shape", "missing: give the dimensions of each input after the batch axis, once per input in the order of the batch's inputs, e.g. --input-shape 784 or --input-shape 1,28,28 (checkpoints do not record them)")
	}
	for _, s := range e.shapes {
		dims, err := parseShape(s)
		if err != nil {
			bad("input-shape", "%v", err)
		}
		r.inputs = append(r.inputs, volt.InputSpec{DType: dtypes.Float32, Dims: dims})
	}
	switch n := len(e.dtypes); {
	case n > 1 && n != len(e.shapes):
		bad("input-dtype", "given %d times for %d inputs (--input-shape); give it once for all the inputs or once per input", n, len(e.shapes))
	case n > 0:
		for i, name := range e.dtypes {
			dt, ok := inputDTypes[strings.ToLower(strings.TrimSpace(name))]
			if !ok {
				bad("input-dtype", "%q: unknown dtype; valid: %s", name, dtypeNames())
				continue
			}
			for j := range r.inputs {
				if n == 1 || j == i {
					r.inputs[j].DType = dt
				}
			}
		}
	}
	if n := len(e.names); n > 0 {
		if n != len(e.shapes) {
			bad("input-name", "given %d times for %d inputs (--input-shape); give one name per input", n, len(e.shapes))
		} else if i := slices.Index(e.names, ""); i >= 0 {
			bad("input-name", "name %d is empty", i+1)
		} else {
			r.opts = append(r.opts, volt.ONNXInputNames(e.names...))
		}
	}
	if e.output == "" {
		bad("output-name", "empty; give the name of the output in the ONNX graph (default output)")
	}
	r.opts = append(r.opts, volt.ONNXOutputName(e.output))
	if e.batchSize < 1 {
		bad("batch-size", "%d: must be at least 1", e.batchSize)
	}
	r.opts = append(r.opts, volt.ONNXBatchSize(e.batchSize))
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return r, nil
}

// checkOutputPath checks that path can be written: its directory exists,
// it is not a directory, and it exists only when overwrite allows it.
func checkOutputPath(path string, overwrite bool) error {
	if fi, err := os.Stat(path); err == nil {
		switch {
		case fi.IsDir():
			return fmt.Errorf("%s is a directory; give the path of the .onnx file to write", path)
		case !overwrite:
			return fmt.Errorf("%s exists; volt does not replace a file it did not write: pass --overwrite to replace it, or give another path", path)
		}
		return nil
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s: directory %s does not exist; create it first or give another path", path, dir)
	}
	return nil
}

// checkCheckpoint checks that path names a readable file; cmd (export or
// serve) is the subcommand that reads it.
func checkCheckpoint(path, program, cmd string) error {
	if path == "" {
		example := "export --onnx model.onnx --input-shape 784 FILE.ckpt"
		if cmd == cmdServe {
			example = "serve --input-shape 784 FILE.ckpt"
		}
		return &Error{Origin: ckptArgOrigin, Problem: fmt.Sprintf("missing: give the checkpoint to %s (%s %s), or --ckpt-path FILE.ckpt", cmd, program, example)}
	}
	f, err := os.Open(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return &Error{Origin: ckptArgOrigin, Problem: fmt.Sprintf("%s does not exist; give a checkpoint that fit wrote (volt_logs/version_N/checkpoints/*.ckpt)", path)}
	case err != nil:
		return &Error{Origin: ckptArgOrigin, Problem: fmt.Sprintf("%s cannot be read: %v", path, err)}
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return &Error{Origin: ckptArgOrigin, Problem: fmt.Sprintf("%s is a directory; give a checkpoint file (volt_logs/version_N/checkpoints/*.ckpt)", path)}
	}
	var b [1]byte
	if _, err := f.Read(b[:]); errors.Is(err, io.EOF) {
		return &Error{Origin: ckptArgOrigin, Problem: fmt.Sprintf("%s is empty, not a checkpoint", path)}
	} else if err != nil {
		return &Error{Origin: ckptArgOrigin, Problem: fmt.Sprintf("%s cannot be read: %v", path, err)}
	}
	return nil
}

// takeCheckpoint reads the argument of export or serve (cmd), the
// checkpoint, as the value of ckpt_path given on the command line.
func takeCheckpoint(cmd string, cl *commandLine, args []string) (string, error) {
	if len(args) > 1 {
		return "", &Error{Problem: fmt.Sprintf("%s takes one checkpoint, got %d arguments %q (options are flags: --key=value)", cmd, len(args), args)}
	}
	ckpt := args[0]
	for _, st := range cl.settings {
		if st.key == keyCkptPath && st.raw != ckpt {
			return "", &Error{Origin: ckptArgOrigin, Problem: fmt.Sprintf("%s, but --ckpt-path says %s; give the checkpoint once", ckpt, st.raw)}
		}
	}
	cl.settings = append(cl.settings, setting{key: keyCkptPath, raw: ckpt, origin: ckptArgOrigin})
	return ckpt, nil
}
