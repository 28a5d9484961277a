package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/nn"
	"github.com/voltml/volt/optim"
)

// digitsMLP is the README's MNIST MLP (784-256-256-10) with an argmax
// PredictStep: the served model of the load test.
type digitsMLP struct{}

func (m *digitsMLP) logits(s *volt.Step, x *graph.Node) *graph.Node {
	x = nn.ReLU(nn.Linear(s.Scope().In("h0"), x, 256))
	x = nn.ReLU(nn.Linear(s.Scope().In("h1"), x, 256))
	return nn.Linear(s.Scope().In("out"), x, 10)
}

func (m *digitsMLP) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	return graph.ReduceAllMean(graph.Square(m.logits(s, b.Input(0))))
}

func (m *digitsMLP) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	return graph.ConvertDType(graph.ArgMax(m.logits(s, b.Input(0)), -1), dtypes.Int32)
}

func (m *digitsMLP) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.SGD(0.01)) }

// loadRow is one row of the load test's table.
type loadRow struct {
	clients, batch int
	p50, p99       time.Duration
	rps            float64
}

// TestLoad serves the MNIST-sized MLP on loopback and sends it requests of
// one image each from 1, 8 and 64 concurrent clients, without batching and
// with batches of up to 16: every answer must be 200 with the class
// Predict gives that image. The latencies and throughput are logged (go
// test -v -run TestLoad ./serve); they depend on the machine and its load.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: about 6,000 requests")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	images := make([][]float32, 64)
	for i := range images {
		images[i] = make([]float32, 784)
		for j := range images[i] {
			images[i][j] = rng.Float32()
		}
	}
	train, err := data.Rows(images, images)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := volt.NewTrainer(volt.Config{MaxSteps: 1, DisableLoggers: true, DisableCheckpointing: true,
		DisableModelSummary: true, EnableProgressBar: volt.Ptr(false), Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	dm := &data.Datasets{Train: train, BatchSize: 16}
	if err := tr.Fit(context.Background(), &digitsMLP{}, dm); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "mlp.ckpt")
	if err := tr.SaveCheckpoint(path, true); err != nil {
		t.Fatal(err)
	}
	p, err := volt.LoadPredictor(path, &digitsMLP{}, volt.PredictorMaxShapes(64))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	y, err := p.Predict(images)
	if err != nil {
		t.Fatal(err)
	}
	want := y.Value().([]int32)

	requests := 1000
	var table bytes.Buffer
	fmt.Fprintf(&table, "%7s  %5s  %6s  %6s  %6s\n", "clients", "batch", "p50_ms", "p99_ms", "rps")
	for _, clients := range []int{1, 8, 64} {
		for _, batch := range []int{1, 16} {
			row := measure(t, p, images, want, clients, batch, requests)
			fmt.Fprintf(&table, "%7d  %5d  %6.2f  %6.2f  %6.0f\n", row.clients, row.batch,
				float64(row.p50)/1e6, float64(row.p99)/1e6, row.rps)
		}
	}
	t.Logf("%d requests a row, GOMAXPROCS %d:\n%s", requests, runtime.GOMAXPROCS(0), table.String())
}

// measure serves p with batches of up to batch and sends requests POSTs
// from clients goroutines, request i carrying images[i%64].
func measure(t *testing.T, p *volt.Predictor, images [][]float32, want []int32, clients, batch, requests int) loadRow {
	t.Helper()
	h, err := NewHandler(p, Config{Input: volt.InputSpec{DType: dtypes.Float32, Dims: []int{784}}, MaxBatch: batch})
	if err != nil {
		t.Fatal(err)
	}
	url, stop := start(t, h)
	defer stop()
	bodies := make([][]byte, len(images))
	for i, im := range images {
		bodies[i] = mustJSON(t, map[string]any{"inputs": [][]float32{im}})
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}, Timeout: time.Minute}
	defer client.CloseIdleConnections()
	ask := func(i int) error {
		resp, err := client.Post(url+"/predict", "application/json", bytes.NewReader(bodies[i%len(bodies)]))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		var got struct{ Outputs []int32 }
		if err := json.Unmarshal(b, &got); err != nil || resp.StatusCode != 200 || len(got.Outputs) != 1 || got.Outputs[0] != want[i%len(want)] {
			return fmt.Errorf("request %d: status %d, answer %s; want class %d", i, resp.StatusCode, b, want[i%len(want)])
		}
		return nil
	}
	for i := range clients { // warm up: compile the batch shapes outside the measurement
		if err := ask(i); err != nil {
			t.Fatal(err)
		}
	}
	lat := make([]time.Duration, requests)
	var next atomic.Int64
	var failed sync.Once
	var firstErr error
	var wg sync.WaitGroup
	begun := time.Now()
	for range clients {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < requests; i = int(next.Add(1)) - 1 {
				t0 := time.Now()
				err := ask(i)
				lat[i] = time.Since(t0)
				if err != nil {
					failed.Do(func() { firstErr = err })
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(begun)
	if firstErr != nil {
		t.Fatal(firstErr)
	}
	slices.Sort(lat)
	return loadRow{clients: clients, batch: batch, p50: lat[len(lat)/2], p99: lat[len(lat)*99/100],
		rps: float64(requests) / elapsed.Seconds()}
}
