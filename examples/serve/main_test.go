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

// start serves s on a loopback port until the test ends; stop shuts it
// down and returns serve's error.
func start(t *testing.T, s *Server) (url string, stop func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, ln, s) }()
	var once sync.Once
	var serr error
	stop = func() error {
		once.Do(func() { cancel(); serr = <-done })
		return serr
	}
	t.Cleanup(func() { stop() })
	return "http://" + ln.Addr().String() + "/predict", stop
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
			s := NewServer(p, batch, 20*time.Millisecond)
			url, stop := start(t, s)
			got := make([]int32, len(images))
			errs := make([]error, len(images))
			var wg sync.WaitGroup
			for i, img := range images {
				body, _ := json.Marshal(request{Pixels: img})
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

// TestBadInput: each malformed body gets status 400 and a JSON error that
// says what would be valid.
func TestBadInput(t *testing.T) {
	p, _ := setup(t)
	url, _ := start(t, NewServer(p, 4, time.Millisecond))
	for _, tc := range []struct {
		name, body, want string
	}{
		{"short", `{"pixels": [1, 2, 3]}`, `field "pixels": got 3 numbers, want 784`},
		{"empty", `{}`, `field "pixels": got 0 numbers, want 784`},
		{"strings", `{"pixels": ["a", "b"]}`, `field "pixels.0": got a JSON string, want 784 numbers`},
		{"not array", `{"pixels": 3}`, `got a JSON number, want 784 numbers`},
		{"not JSON", `pixels=1`, `body is not {"pixels": [784 numbers]}`},
		{"unknown field", `{"image": [1]}`, `body is not {"pixels": [784 numbers]}: json: unknown field "image"`},
		{"two values", `{"pixels": []} {}`, `more than one JSON value`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.Post(url, "application/json", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var e errorResponse
			if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(e.Error, tc.want) {
				t.Errorf("status %d, error %q; want 400 and %q", resp.StatusCode, e.Error, tc.want)
			}
		})
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: status %d, want 405", resp.StatusCode)
	}
}

// TestGracefulShutdown: a request waiting in a batch when the shutdown
// starts gets its answer, serve returns nil, and new requests are refused.
func TestGracefulShutdown(t *testing.T) {
	p, images := setup(t)
	want := direct(t, p, images[:1])
	// A batch of up to 8 that waits 500ms: the one request is still in
	// flight when stop is called.
	s := NewServer(p, 8, 500*time.Millisecond)
	url, stop := start(t, s)
	body, _ := json.Marshal(request{Pixels: images[0]})
	type answer struct {
		class int32
		err   error
	}
	got := make(chan answer, 1)
	go func() {
		c, err := post(&http.Client{}, url, body)
		got <- answer{c, err}
	}()
	time.Sleep(100 * time.Millisecond) // the request reaches the batcher
	t0 := time.Now()
	if err := stop(); err != nil {
		t.Fatalf("serve after shutdown: %v", err)
	}
	a := <-got
	if a.err != nil || a.class != want[0] {
		t.Fatalf("request in flight: class %d, error %v; want class %d", a.class, a.err, want[0])
	}
	if waited := time.Since(t0); waited < 200*time.Millisecond {
		t.Errorf("shutdown took %s: it did not wait for the request in flight", waited)
	}
	if _, err := http.Post(url, "application/json", bytes.NewReader(body)); err == nil {
		t.Error("a request after shutdown was answered, want the connection refused")
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
