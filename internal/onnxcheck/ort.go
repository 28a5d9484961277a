package onnxcheck

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/internal/testenv"
)

// ORTVersion is the onnxruntime-node release the tests run (.ci/run
// installs it with npm).
const ORTVersion = "1.30.0"

// ORTModuleVar names the directory of the onnxruntime-node package, where
// it is not in the default place (ORTModuleDir).
const ORTModuleVar = "VOLT_ONNXRUNTIME_NODE"

// ORTModuleDir is where .ci/run installs onnxruntime-node:
// $XDG_CACHE_HOME (or ~/.cache)/volt/onnxruntime-node-VERSION/node_modules/onnxruntime-node,
// or what ORTModuleVar says.
func ORTModuleDir() string {
	if dir := os.Getenv(ORTModuleVar); dir != "" {
		return dir
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(cache, "volt", "onnxruntime-node-"+ORTVersion, "node_modules", "onnxruntime-node")
}

// ORTInstall says how to install what ORT needs.
func ORTInstall() string {
	return fmt.Sprintf(`npm install --prefix "${XDG_CACHE_HOME:-$HOME/.cache}/volt/onnxruntime-node-%s" --ignore-scripts onnxruntime-node@%s, as .ci/run does, or set %s to the package's directory`,
		ORTVersion, ORTVersion, ORTModuleVar)
}

// RequireORT returns the paths of node and of the onnxruntime-node
// package; where either is missing it skips t, or fails it under
// VOLT_REQUIRE_TOOLS=1. Tests call it before the work whose result ONNX
// Runtime checks.
func RequireORT(t testing.TB) (node, module string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Missing(t, "Node.js (node) is not on PATH, and ONNX Runtime's tests run onnxruntime-node in it", "apt-get install nodejs npm")
	}
	module = ORTModuleDir()
	if _, err := os.Stat(filepath.Join(module, "package.json")); err != nil {
		testenv.Missing(t, fmt.Sprintf("onnxruntime-node is not installed at %s", module), ORTInstall())
	}
	return node, module
}

// ortTypes are the dtypes ortrun.js reads and writes, by ONNX Runtime's name.
var ortTypes = map[dtypes.DType]string{dtypes.Float32: "float32", dtypes.Float64: "float64", dtypes.Int32: "int32", dtypes.Int64: "int64"}

// ORTRun is what one run of a model in ONNX Runtime returned.
type ORTRun struct {
	// Version is ONNX Runtime's.
	Version string
	// Outputs are the model's outputs, in the graph's order.
	Outputs []*tensors.Tensor
}

// ORT runs the model file in ONNX Runtime (npm's onnxruntime-node, CPU, one
// thread, default graph optimizations) on inputs, fed by name in the order
// of names. A missing node or onnxruntime-node skips t, or fails it under
// VOLT_REQUIRE_TOOLS=1; a model ONNX Runtime refuses is an error.
func ORT(t testing.TB, modelPath string, names []string, inputs []*tensors.Tensor) (*ORTRun, error) {
	t.Helper()
	node, module := RequireORT(t)
	if len(names) != len(inputs) {
		return nil, fmt.Errorf("ORT: %d names for %d inputs", len(names), len(inputs))
	}
	tmp := t.TempDir()
	type tensorFile struct {
		Name string `json:"name"`
		Type string `json:"type"`
		Dims []int  `json:"dims"`
		File string `json:"file"`
	}
	req := struct {
		Model  string       `json:"model"`
		Inputs []tensorFile `json:"inputs"`
		OutDir string       `json:"out_dir"`
	}{Model: modelPath, OutDir: tmp, Inputs: []tensorFile{}}
	for i, x := range inputs {
		typ, ok := ortTypes[x.DType()]
		if !ok {
			return nil, fmt.Errorf("ORT: input %q is %s; ortrun.js reads %v", names[i], x.DType(), ortTypes)
		}
		file := filepath.Join(tmp, fmt.Sprintf("input_%d.bin", i))
		var werr error
		if err := x.ConstBytes(func(b []byte) { werr = os.WriteFile(file, b, 0o644) }); err != nil {
			return nil, err
		}
		if werr != nil {
			return nil, werr
		}
		req.Inputs = append(req.Inputs, tensorFile{Name: names[i], Type: typ, Dims: append([]int{}, x.Shape().Dimensions...), File: file})
	}
	reqPath := filepath.Join(tmp, "request.json")
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(reqPath, b, 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(node, filepath.Join(dir(), "ortrun.js"), reqPath)
	cmd.Env = append(os.Environ(), "ORT_NODE_MODULE="+module)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("ONNX Runtime on %s: %v\n%s", modelPath, err, stderr.String())
	}
	var resp struct {
		Version string       `json:"version"`
		Outputs []tensorFile `json:"outputs"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		return nil, fmt.Errorf("ONNX Runtime on %s: reading ortrun.js's answer %q: %w", modelPath, out, err)
	}
	run := &ORTRun{Version: resp.Version}
	for _, o := range resp.Outputs {
		dt := dtypes.InvalidDType
		for d, name := range ortTypes {
			if name == o.Type {
				dt = d
			}
		}
		if dt == dtypes.InvalidDType {
			return nil, fmt.Errorf("ONNX Runtime on %s: output %q is %s; ortrun.js reads %v", modelPath, o.Name, o.Type, ortTypes)
		}
		raw, err := os.ReadFile(o.File)
		if err != nil {
			return nil, err
		}
		s := shapes.Make(dt, o.Dims...)
		if int64(len(raw)) != s.ByteSize() {
			return nil, fmt.Errorf("ONNX Runtime on %s: output %q holds %d bytes, not the %d of %s", modelPath, o.Name, len(raw), s.ByteSize(), s)
		}
		x := tensors.FromShape(s)
		if err := x.MutableBytes(func(b []byte) { copy(b, raw) }); err != nil {
			return nil, err
		}
		run.Outputs = append(run.Outputs, x)
	}
	return run, nil
}
