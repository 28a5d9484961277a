package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt"
)

// Handler is the http.Handler of a prediction endpoint over a Predictor,
// to mount at any path of a program's own mux (Serve mounts it at
// /predict). It is safe for concurrent use; Close it after the server that
// mounts it has shut down.
type Handler struct {
	p       *volt.Predictor
	cfg     Config
	rowSize int

	jobs    chan job      // nil without batching
	stopped chan struct{} // closed when the batcher has returned
	mu      sync.RWMutex  // held for reading while a job is sent, for writing by Close
	closed  bool
	calls   atomic.Int64 // Predict calls, for tests
}

// NewHandler serves p with cfg; an invalid cfg is an error naming the
// field. The predictor stays the caller's to close.
func NewHandler(p *volt.Predictor, cfg Config) (*Handler, error) {
	if p == nil {
		return nil, fmt.Errorf("serve: NewHandler: the predictor is nil; pass one from volt.LoadPredictor")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	h := &Handler{p: p, cfg: cfg, rowSize: rowSize(cfg.Input.Dims), stopped: make(chan struct{})}
	if cfg.MaxBatch > 1 {
		h.jobs = make(chan job, cfg.MaxBatch)
		go h.batcher()
	} else {
		close(h.stopped)
	}
	return h, nil
}

// Config returns the configuration in effect, defaults filled in.
func (h *Handler) Config() Config { return h.cfg }

// Close stops the batcher once every request it holds is answered. Call it
// after http.Server.Shutdown (Serve does); requests after Close get status
// 503.
func (h *Handler) Close() {
	h.mu.Lock()
	if !h.closed {
		h.closed = true
		if h.jobs != nil {
			close(h.jobs)
		}
	}
	h.mu.Unlock()
	<-h.stopped
}

// errClosed answers the requests that come after Close.
var errClosed = errors.New("the server is shutting down; retry on another instance")

// response is the answer to a good request.
type response struct {
	Outputs []any `json:"outputs"`
}

// errorResponse is the answer to a refused or failed one.
type errorResponse struct {
	Error string `json:"error"`
}

// ServeHTTP answers a POST at whatever path the handler is mounted
// (Serve mounts it at /predict); another method gets a JSON error saying
// what the endpoint takes.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeJSON(w, http.StatusMethodNotAllowed, errorResponse{fmt.Sprintf("method %s; POST %s with %s", r.Method, r.URL.Path, h.want())})
		return
	}
	rows, err := h.decode(w, r)
	if err != nil {
		writeJSON(w, err.(*badRequest).status, errorResponse{err.Error()})
		return
	}
	outs, err := h.predict(r.Context(), rows)
	switch {
	case errors.Is(err, errClosed):
		writeJSON(w, http.StatusServiceUnavailable, errorResponse{err.Error()})
		return
	case err != nil:
		writeJSON(w, http.StatusInternalServerError, errorResponse{err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, response{outs})
}

// writeJSON writes v with status; a value JSON cannot hold (a NaN
// prediction) becomes a 500 naming the problem.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(v); err != nil {
		status = http.StatusInternalServerError
		b.Reset()
		json.NewEncoder(&b).Encode(errorResponse{fmt.Sprintf("the prediction cannot be written as JSON: %v", err)})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

// predict returns the outputs of rows, through the batcher or in one call.
func (h *Handler) predict(ctx context.Context, rows [][]float64) ([]any, error) {
	h.mu.RLock()
	if h.closed {
		h.mu.RUnlock()
		return nil, errClosed
	}
	if h.jobs == nil {
		h.mu.RUnlock()
		res := h.run(rows, []int{len(rows)})[0]
		return res.outs, res.err
	}
	j := job{rows: rows, done: make(chan result, 1)}
	select {
	case h.jobs <- j:
		h.mu.RUnlock()
	case <-ctx.Done():
		h.mu.RUnlock()
		return nil, ctx.Err()
	}
	res := <-j.done // the batcher answers every job it takes
	return res.outs, res.err
}

// run predicts the stacked rows in one call and splits the output rows by
// counts, the number of rows of each request in order.
func (h *Handler) run(rows [][]float64, counts []int) []result {
	results := make([]result, len(counts))
	fail := func(err error) []result {
		for i := range results {
			results[i].err = err
		}
		return results
	}
	h.calls.Add(1)
	y, err := h.p.Predict(stack(rows, h.cfg.Input.DType, h.cfg.Input.Dims))
	if err != nil {
		return fail(err)
	}
	outs, err := outputRows(y, len(rows))
	if err != nil {
		return fail(err)
	}
	at := 0
	for i, n := range counts {
		results[i].outs = outs[at : at+n]
		at += n
	}
	return results
}

// outputRows splits a prediction into its n rows along the first axis.
func outputRows(y *tensors.Tensor, n int) ([]any, error) {
	if dims := y.Shape().Dimensions; len(dims) == 0 || dims[0] != n {
		return nil, fmt.Errorf("PredictStep returned shape %s for %d rows; want the batch on the first axis", y.Shape(), n)
	}
	v := reflect.ValueOf(y.Value())
	outs := make([]any, n)
	for i := range outs {
		outs[i] = v.Index(i).Interface()
	}
	return outs, nil
}
