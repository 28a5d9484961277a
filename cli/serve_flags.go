package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gomlx/compute/dtypes"
	"github.com/spf13/pflag"
	"github.com/voltml/volt/serve"
)

// cmdServe serves the module's PredictStep over HTTP.
const cmdServe = "serve"

// serveFlags are the flags only serve takes.
type serveFlags struct {
	addr         string
	shape        []string // --input-shape: exactly one
	dtype        string
	maxBatch     int
	wait         time.Duration
	maxRows      int
	maxBodyBytes int64
	ckpt         string // the positional FILE.ckpt
}

// serveFlagNames are the flags of serveFlags, for suggestions.
var serveFlagNames = []string{"addr", "input_shape", "input_dtype", "max_batch", "wait", "max_rows", "max_body_bytes"}

// addFlags adds serve's own flags to fs.
func (f *serveFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.addr, "addr", "127.0.0.1:8080", `the address to listen on (host:port; ":8080" for every interface, port 0 for any free port)`)
	fs.StringArrayVar(&f.shape, "input_shape", nil, `the dimensions of the input after the batch axis, comma-separated ("784", "1,28,28"); required (checkpoints do not record them)`)
	fs.StringVar(&f.dtype, "input_dtype", "float32", "the dtype of the input: float32, float64, int32 or int64")
	fs.IntVar(&f.maxBatch, "max_batch", 16, "the most rows in one Predict call, collected across requests (1: no batching)")
	fs.DurationVar(&f.wait, "wait", 2*time.Millisecond, "the longest the first request of a batch waits for others")
	fs.IntVar(&f.maxRows, "max_rows", 0, "the most rows one request may carry (0: --max-batch, or 64 without batching)")
	fs.Int64Var(&f.maxBodyBytes, "max_body_bytes", 0, "the largest request body in bytes (0: 32 bytes per value of --max-rows rows, at least 64 KiB)")
}

// serveRequest is a checked serve command line.
type serveRequest struct {
	addr string
	cfg  serve.Config
}

// request checks the flags and returns what to serve, or every problem,
// each naming its flag.
func (f *serveFlags) request() (*serveRequest, error) {
	var errs []error
	bad := func(flag, format string, args ...any) {
		errs = append(errs, &Error{Origin: "flag --" + flag, Problem: fmt.Sprintf(format, args...)})
	}
	r := &serveRequest{addr: f.addr, cfg: serve.Config{MaxBatch: f.maxBatch, Wait: f.wait, MaxRows: f.maxRows, MaxBodyBytes: f.maxBodyBytes}}
	switch len(f.shape) {
	case 0:
		bad("input-shape", "missing: give the dimensions of the input after the batch axis, e.g. --input-shape 784 (checkpoints do not record them)")
	case 1:
		dims, err := parseShape(f.shape[0])
		if err != nil {
			bad("input-shape", "%v", err)
		}
		r.cfg.Input.Dims = dims
	default:
		bad("input-shape", "given %d times; serve takes modules with one input (b.Input(0)): give it once", len(f.shape))
	}
	switch dt := inputDTypes[strings.ToLower(strings.TrimSpace(f.dtype))]; dt {
	case dtypes.Float32, dtypes.Float64, dtypes.Int32, dtypes.Int64:
		r.cfg.Input.DType = dt
	default:
		bad("input-dtype", "%q: serve takes float32, float64, int32 or int64", f.dtype)
	}
	if f.addr == "" {
		bad("addr", "empty; give host:port, e.g. 127.0.0.1:8080")
	}
	if f.maxBatch < 1 {
		bad("max-batch", "%d: must be at least 1 (1: no batching)", f.maxBatch)
	}
	if f.wait <= 0 {
		bad("wait", "%s: must be positive, e.g. 2ms", f.wait)
	}
	if f.maxRows < 0 {
		bad("max-rows", "%d: must be at least 1 (0: the default)", f.maxRows)
	} else if f.maxBatch > 1 && f.maxRows > f.maxBatch {
		bad("max-rows", "%d is more than --max-batch %d: a request must fit one batch", f.maxRows, f.maxBatch)
	}
	if f.maxBodyBytes < 0 {
		bad("max-body-bytes", "%d: must be positive (0: the default)", f.maxBodyBytes)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return r, nil
}
