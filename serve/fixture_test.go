package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/testutil"
)

// boringInput is testutil.Boring's input: 8 float32 features.
var boringInput = volt.InputSpec{DType: dtypes.Float32, Dims: []int{8}}

// fixture is a Boring checkpoint trained once for the package's tests and
// a predictor of it.
var fixture struct {
	once sync.Once
	err  error
	p    *volt.Predictor
}

// predictor returns the shared predictor of a trained Boring model.
func predictor(t *testing.T) *volt.Predictor {
	t.Helper()
	fixture.once.Do(func() {
		dir, err := os.MkdirTemp("", "volt-serve-test")
		if err != nil {
			fixture.err = err
			return
		}
		defer os.RemoveAll(dir) // ours: the checkpoint is read into the predictor
		path := filepath.Join(dir, "boring.ckpt")
		tr, err := volt.NewTrainer(volt.Config{MaxEpochs: 2, DisableLoggers: true, DisableCheckpointing: true,
			DisableModelSummary: true, EnableProgressBar: volt.Ptr(false), Log: slog.New(slog.DiscardHandler), Seed: volt.Ptr[uint64](1)})
		if err != nil {
			fixture.err = err
			return
		}
		if fixture.err = tr.Fit(context.Background(), &testutil.Boring{}, testutil.NewBoringDataModule()); fixture.err != nil {
			return
		}
		if fixture.err = tr.SaveCheckpoint(path, true); fixture.err != nil {
			return
		}
		fixture.p, fixture.err = volt.LoadPredictor(path, &testutil.Boring{}, volt.PredictorMaxShapes(64))
	})
	if fixture.err != nil {
		t.Fatal(fixture.err)
	}
	return fixture.p
}

// rows returns n examples' inputs of Boring's regression as JSON rows.
func rows(t *testing.T, n int) [][]float64 {
	t.Helper()
	ds := testutil.Regression(n, 7)
	out := make([][]float64, n)
	for i := range out {
		e, err := ds.Get(i)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range e.Inputs[0].Value.([]float32) {
			out[i] = append(out[i], float64(v))
		}
	}
	return out
}

// direct is what Predictor.Predict returns for rows in one call, row by row.
func direct(t *testing.T, p *volt.Predictor, rows [][]float64) [][]float32 {
	t.Helper()
	y, err := p.Predict(stack(rows, dtypes.Float32, []int{8}))
	if err != nil {
		t.Fatal(err)
	}
	return y.Value().([][]float32)
}

// start serves h on a loopback port; stop cancels Serve and returns its
// error. The test stops it at the latest when it ends.
func start(t *testing.T, h *Handler) (url string, stop func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, h) }()
	var once sync.Once
	var serr error
	stop = func() error {
		once.Do(func() { cancel(); serr = <-done })
		return serr
	}
	t.Cleanup(func() { stop() })
	return "http://" + ln.Addr().String(), stop
}

// post sends body to url+"/predict" and returns the status and the
// decoded JSON answer.
func post(t *testing.T, url string, body []byte) (int, map[string]json.RawMessage) {
	t.Helper()
	resp, err := http.Post(url+"/predict", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json (body %s)", ct, b)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("answer is not a JSON object: %s", b)
	}
	return resp.StatusCode, m
}

// outputs decodes a good answer's outputs of Boring: one number per row.
func outputs(t *testing.T, m map[string]json.RawMessage) [][]float32 {
	t.Helper()
	var outs [][]float32
	if err := json.Unmarshal(m["outputs"], &outs); err != nil {
		t.Fatalf("outputs %s: %v", m["outputs"], err)
	}
	return outs
}

// mustJSON encodes v.
func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
