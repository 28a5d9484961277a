package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voltml/volt"
	"github.com/voltml/volt/datasets/mnist"
	"github.com/voltml/volt/serve"
)

// fixture is a checkpoint trained once for every test, a predictor of it,
// and test images.
var fixture struct {
	once   sync.Once
	err    error
	p      *volt.Predictor
	images [][]float32
}

func setup(t *testing.T) (*volt.Predictor, [][]float32) {
	t.Helper()
	fixture.once.Do(func() {
		dir, err := os.MkdirTemp("", "volt-serve-test")
		if err != nil {
			fixture.err = err
			return
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "mlp.ckpt")
		if fixture.err = train(context.Background(), path, 30); fixture.err != nil {
			return
		}
		if fixture.p, fixture.err = load(path); fixture.err != nil {
			return
		}
		_, test, err := mnist.Load()
		if err != nil {
			fixture.err = err
			return
		}
		for i := range 64 {
			e, err := test.Get(i)
			if err != nil {
				fixture.err = err
				return
			}
			fixture.images = append(fixture.images, e.Inputs[0].Value.([]float32))
		}
	})
	if fixture.err != nil {
		t.Fatal(fixture.err)
	}
	return fixture.p, fixture.images
}

// start serves h (package serve's Serve) on a loopback port until the
// test ends; stop shuts it down and returns Serve's error.
func start(t *testing.T, h *serve.Handler) (url string, stop func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve.Serve(ctx, ln, h) }()
	var once sync.Once
	var serr error
	stop = func() error {
		once.Do(func() { cancel(); serr = <-done })
		return serr
	}
	t.Cleanup(func() { stop() })
	return "http://" + ln.Addr().String() + "/predict", stop
}

// handler is newHandler, failing the test on its error.
func handler(t *testing.T, p *volt.Predictor, batch int, wait time.Duration) *serve.Handler {
	t.Helper()
	h, err := newHandler(p, batch, wait)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// direct is the predictor's class for each image, in one call.
func direct(t *testing.T, p *volt.Predictor, images [][]float32) []int32 {
	t.Helper()
	y, err := p.Predict(images)
	if err != nil {
		t.Fatal(err)
	}
	return y.Value().([]int32)
}

// TestEndpointEqualsPredictor: concurrent clients, with and without
// batching, each get the class the predictor gives their image called
// directly (one call over all images, and one call per image), and the
// images have several different classes, so a client given another's row
// is caught.
func TestEndpointEqualsPredictor(t *testing.T) {
	p, images := setup(t)
	want := direct(t, p, images)
	classes := map[int32]bool{}
	for i, img := range images {
		classes[want[i]] = true
		if one := direct(t, p, [][]float32{img}); one[0] != want[i] {
			t.Fatalf("image %d: predictor alone says %d, in a batch of %d %d", i, one[0], len(images), want[i])
		}
	}
	if len(classes) < 5 {
		t.Fatalf("the test images have %d classes, want at least 5 to tell rows apart", len(classes))
	}
	for _, batch := range []int{1, 16} {
		t.Run(fmt.Sprintf("batch=%d", batch), func(t *testing.T) {
			url, stop := start(t, handler(t, p, batch, 20*time.Millisecond))
			got := make([]int32, len(images))
			errs := make([]error, len(images))
			var wg sync.WaitGroup
			for i, img := range images {
				body, _ := json.Marshal(request{Inputs: [][]float32{img}})
				wg.Go(func() { got[i], errs[i] = post(http.DefaultClient, url, body) })
			}
			wg.Wait()
			for i := range images {
				if errs[i] != nil {
					t.Fatalf("image %d: %v", i, errs[i])
				}
				if got[i] != want[i] {
					t.Errorf("image %d: endpoint says class %d, predictor %d", i, got[i], want[i])
				}
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestBadInput: an image of the wrong size gets status 400 and a JSON
// error saying what would be valid (package serve's tests have every
// other refusal).
func TestBadInput(t *testing.T) {
	p, _ := setup(t)
	url, _ := start(t, handler(t, p, 4, time.Millisecond))
	resp, err := http.Post(url, "application/json", strings.NewReader(`{"inputs": [[1, 2, 3]]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct{ Error string }
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(e.Error, "784") {
		t.Errorf("status %d, error %q; want 400 and an error naming the 784 values a row holds", resp.StatusCode, e.Error)
	}
}

// TestLoadTestRuns: the -loadtest table has a row per clients and mode.
func TestLoadTestRuns(t *testing.T) {
	p, _ := setup(t)
	var out bytes.Buffer
	if err := loadTest(context.Background(), p, 4, time.Millisecond, 64, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 7 || !strings.Contains(lines[0], "p99_ms") {
		t.Fatalf("table:\n%s\nwant a header and 6 rows", out.String())
	}
	for _, l := range lines[1:] {
		var clients, batch int
		var p50, p99, rps float64
		if _, err := fmt.Sscan(l, &clients, &batch, &p50, &p99, &rps); err != nil || p50 <= 0 || p99 < p50 || rps <= 0 {
			t.Errorf("row %q: want clients batch p50 p99 rps with 0 < p50 <= p99, rps > 0 (%v)", l, err)
		}
	}
}
