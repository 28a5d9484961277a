package serve

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// httpPost sends body to url's /predict and returns the answer's body.
func httpPost(url string, body []byte) ([]byte, error) {
	resp, err := http.Post(url+"/predict", "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// send sends one request and returns its status and JSON error.
func send(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m struct{ Error string }
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Errorf("answer is not JSON: %s", b)
	}
	return resp.StatusCode, m.Error
}

// TestGracefulShutdown: a request waiting in the batcher when the server
// is told to stop (as SIGINT or SIGTERM do through the context) is
// answered in full, Serve returns nil, and new connections are refused.
func TestGracefulShutdown(t *testing.T) {
	p := predictor(t)
	h, err := NewHandler(p, Config{Input: boringInput, MaxBatch: 8, Wait: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	url, stop := start(t, h)
	in := rows(t, 1)
	type answer struct {
		body []byte
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		b, err := httpPost(url, mustJSON(t, map[string]any{"inputs": in}))
		got <- answer{b, err}
	}()
	time.Sleep(100 * time.Millisecond) // the request now waits for its batch to fill
	begun := time.Now()
	if err := stop(); err != nil {
		t.Fatalf("Serve returned %v after the context ended; want nil", err)
	}
	a := <-got
	if a.err != nil {
		t.Fatalf("the request in flight failed: %v", a.err)
	}
	var m struct{ Outputs [][]float32 }
	if err := json.Unmarshal(a.body, &m); err != nil || len(m.Outputs) != 1 || m.Outputs[0][0] != direct(t, p, in)[0][0] {
		t.Errorf("the request in flight got %s; want Predict's output %v", a.body, direct(t, p, in))
	}
	if waited := time.Since(begun); waited > 5*time.Second {
		t.Errorf("shutdown took %s", waited)
	}
	if _, err := httpPost(url, mustJSON(t, map[string]any{"inputs": in})); err == nil {
		t.Error("a request after shutdown was answered; want the connection refused")
	}
}
