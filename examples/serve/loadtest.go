package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/voltml/volt"
	"github.com/voltml/volt/serve"
)

// loadRow is one row of the load test's table.
type loadRow struct {
	Clients, Batch int
	P50, P99       time.Duration
	RPS            float64
}

// loadTest serves p on a loopback port, without batching and with batches
// of up to batch, and prints a row per number of clients (1, 8, 64) and mode.
func loadTest(ctx context.Context, p *volt.Predictor, batch int, wait time.Duration, requests int, out io.Writer) error {
	body, err := json.Marshal(request{Inputs: [][]float32{testImage(0)}})
	if err != nil {
		return err
	}
	modes := []int{1}
	if batch > 1 {
		modes = append(modes, batch)
	}
	fmt.Fprintf(out, "%7s  %5s  %6s  %6s  %6s\n", "clients", "batch", "p50_ms", "p99_ms", "rps")
	for _, clients := range []int{1, 8, 64} {
		for _, b := range modes {
			row, err := measure(ctx, p, b, wait, clients, requests, body)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "%7d  %5d  %6.2f  %6.2f  %6.0f\n", row.Clients, row.Batch,
				ms(row.P50), ms(row.P99), row.RPS)
		}
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// measure starts a server on 127.0.0.1 and sends it requests POSTs of body
// from clients goroutines, then shuts it down.
func measure(ctx context.Context, p *volt.Predictor, batch int, wait time.Duration, clients, requests int, body []byte) (loadRow, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return loadRow{}, err
	}
	h, err := newHandler(p, batch, wait)
	if err != nil {
		ln.Close()
		return loadRow{}, err
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- serve.Serve(sctx, ln, h) }()
	url := "http://" + ln.Addr().String() + "/predict"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}, Timeout: time.Minute}
	// Warm up: compile the batch shapes outside the measurement.
	for range clients {
		if _, err := post(client, url, body); err != nil {
			stop()
			return loadRow{}, err
		}
	}
	lat := make([]time.Duration, requests)
	var next atomic.Int64
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= requests {
					return
				}
				t0 := time.Now()
				_, err := post(client, url, body)
				lat[i] = time.Since(t0)
				if err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	stop()
	client.CloseIdleConnections()
	if err := <-done; err != nil {
		return loadRow{}, err
	}
	if firstErr != nil {
		return loadRow{}, firstErr
	}
	slices.Sort(lat)
	return loadRow{Clients: clients, Batch: batch, P50: lat[len(lat)/2], P99: lat[len(lat)*99/100],
		RPS: float64(requests) / elapsed.Seconds()}, nil
}

// post sends body to url and returns the predicted class.
func post(client *http.Client, url string, body []byte) (int32, error) {
	resp, err := client.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("POST %s: %s: %s", url, resp.Status, raw)
	}
	var r response
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Outputs) != 1 {
		return 0, fmt.Errorf("POST %s: %q is not one output (%v)", url, raw, err)
	}
	return r.Outputs[0], nil
}

// testImage is a deterministic image (pixels in [0, 1)) that differs by seed.
func testImage(seed int) []float32 {
	px := make([]float32, Pixels)
	x := uint32(seed)*2654435761 + 1
	for i := range px {
		x = x*1664525 + 1013904223
		px[i] = float32(x>>8) / (1 << 24)
	}
	return px
}
