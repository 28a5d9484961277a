// Package onnxcheck runs the checks of volt's ONNX export that are not
// volt: Debian's python3-onnx checker; ONNX Runtime, npm's
// onnxruntime-node run by Node.js (ORT, ortrun.js); and two independent Go
// runtimes, gonnx (github.com/advancedclimatesystems/gonnx, in process)
// and onnx-go's Gorgonia backend (github.com/owulveryck/onnx-go, built
// from the module in gorgonnxrun/ and run as a command). Missing
// python3-onnx, Node.js or onnxruntime-node, or a gorgonnx runner that
// cannot be built, skips the test, or fails it under VOLT_REQUIRE_TOOLS=1.
package onnxcheck

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/advancedclimatesystems/gonnx"
	"github.com/voltml/volt/internal/testenv"
	"gorgonia.org/tensor"
)

// Python is Debian's interpreter, which sees python3-onnx.
const Python = "/usr/bin/python3"

// Report is what the checker says of a valid model.
type Report struct {
	ONNXVersion string         `json:"onnx_version"`
	IRVersion   int            `json:"ir_version"`
	Opsets      map[string]int `json:"opsets"`
	Inputs      []Value        `json:"inputs"`
	Outputs     []Value        `json:"outputs"`
	Ops         []string       `json:"ops"`
	DocString   string         `json:"doc_string"`
}

// Value is a graph input or output: ElemType is ONNX's TensorProto data
// type (1 float32, 6 int32, 7 int64), each dimension an int or a name.
type Value struct {
	Name     string `json:"name"`
	ElemType int    `json:"elem_type"`
	Dims     []any  `json:"dims"`
}

// dir is this package's source directory.
func dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Check runs onnx.checker.check_model(full_check=True) on the model at
// path and returns its report; an invalid model fails t.
func Check(t testing.TB, path string) Report {
	t.Helper()
	if err := exec.Command(Python, "-c", "import onnx").Run(); err != nil {
		testenv.Missing(t, "python3-onnx is not installed ("+Python+" -c 'import onnx': "+err.Error()+")", "apt-get install python3-onnx")
	}
	out, err := exec.Command(Python, filepath.Join(dir(), "check.py"), path).CombinedOutput()
	if err != nil {
		t.Fatalf("python3-onnx's checker refuses %s: %v\n%s", path, err, out)
	}
	var r Report
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("checker report %q: %v", out, err)
	}
	return r
}

// Gonnx runs the model with gonnx on one float32 input and returns the
// named output's data.
func Gonnx(t testing.TB, model []byte, input string, x []float32, dims []int, output string) ([]float32, error) {
	t.Helper()
	m, err := gonnx.NewModelFromBytes(model)
	if err != nil {
		return nil, fmt.Errorf("gonnx: reading the model: %w", err)
	}
	res, err := m.Run(gonnx.Tensors{input: tensor.New(tensor.WithShape(dims...), tensor.WithBacking(append([]float32(nil), x...)))})
	if err != nil {
		return nil, fmt.Errorf("gonnx: running the model: %w", err)
	}
	out, ok := res[output]
	if !ok {
		return nil, fmt.Errorf("gonnx: no output %q", output)
	}
	data, ok := out.Data().([]float32)
	if !ok {
		return nil, fmt.Errorf("gonnx: output %q is %T, not float32", output, out.Data())
	}
	return data, nil
}

var runner struct {
	once sync.Once
	path string
	err  error
}

// gorgonnxRunner builds gorgonnxrun once per process.
func gorgonnxRunner(t testing.TB) string {
	t.Helper()
	runner.once.Do(func() {
		tmp, err := os.MkdirTemp("", "gorgonnxrun")
		if err != nil {
			runner.err = err
			return
		}
		runner.path = filepath.Join(tmp, "gorgonnxrun")
		cmd := exec.Command("go", "build", "-o", runner.path, ".")
		cmd.Dir = filepath.Join(dir(), "gorgonnxrun")
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
		if out, err := cmd.CombinedOutput(); err != nil {
			runner.err = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if runner.err != nil {
		testenv.Missing(t, "building onnx-go's runner (internal/onnxcheck/gorgonnxrun) failed: "+runner.err.Error(), "its module needs the Go module proxy or a filled module cache")
	}
	return runner.path
}

// Gorgonnx runs the model file with onnx-go's Gorgonia backend on one
// float32 input and returns its first output's data and dimensions.
func Gorgonnx(t testing.TB, modelPath string, x []float32, dims []int) ([]float32, []int, error) {
	t.Helper()
	bin := gorgonnxRunner(t)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "input.f32"), filepath.Join(dir, "output.f32")
	if err := os.WriteFile(in, float32Bytes(x), 0o644); err != nil {
		t.Fatal(err)
	}
	ds := make([]string, len(dims))
	for i, d := range dims {
		ds[i] = strconv.Itoa(d)
	}
	msg, err := exec.Command(bin, modelPath, in, strings.Join(ds, ","), out).CombinedOutput()
	if err != nil {
		return nil, nil, fmt.Errorf("gorgonnx: %v\n%s", err, msg)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		return nil, nil, err
	}
	vals := make([]float32, len(raw)/4)
	for i := range vals {
		vals[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	var shape []int
	for _, f := range strings.Fields(strings.Trim(strings.TrimSpace(string(msg)), "()")) {
		n, err := strconv.Atoi(strings.Trim(f, ","))
		if err != nil {
			return nil, nil, fmt.Errorf("gorgonnx: output shape %q", msg)
		}
		shape = append(shape, n)
	}
	return vals, shape, nil
}

func float32Bytes(x []float32) []byte {
	b := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}
