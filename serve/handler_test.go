package serve

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomlx/compute/dtypes"
	"github.com/voltml/volt"
)

// TestAnswersEqualPredict: a request's outputs are, bitwise, what
// Predictor.Predict returns for its rows in one call, with and without
// batching.
func TestAnswersEqualPredict(t *testing.T) {
	p := predictor(t)
	for _, tc := range []struct {
		name     string
		maxBatch int
		rows     int
	}{
		{"no batching, one row", 1, 1},
		{"no batching, 5 rows", 1, 5},
		{"batching, one row", 8, 1},
		{"batching, a full batch", 8, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := NewHandler(p, Config{Input: boringInput, MaxBatch: tc.maxBatch, Wait: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			url, _ := start(t, h)
			in := rows(t, tc.rows)
			status, m := post(t, url, mustJSON(t, map[string]any{"inputs": in}))
			if status != 200 {
				t.Fatalf("status %d: %s", status, m["error"])
			}
			got, want := outputs(t, m), direct(t, p, in)
			if len(got) != len(want) {
				t.Fatalf("%d outputs for %d rows", len(got), len(want))
			}
			for i := range want {
				if got[i][0] != want[i][0] {
					t.Errorf("row %d: served %v, Predict %v", i, got[i], want[i])
				}
			}
		})
	}
}

// TestConcurrentClientsAreBatched: 32 clients sending one row each at once
// get their own row's output (within float32 rounding of a batch of one:
// a batch's matmul may sum in another order), in fewer Predict calls than
// requests.
func TestConcurrentClientsAreBatched(t *testing.T) {
	p := predictor(t)
	h, err := NewHandler(p, Config{Input: boringInput, MaxBatch: 8, Wait: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	url, _ := start(t, h)
	in := rows(t, 32)
	want := direct(t, p, in)
	var wg sync.WaitGroup
	errs := make(chan string, len(in))
	for i := range in {
		wg.Go(func() {
			resp, err := httpPost(url, mustJSON(t, map[string]any{"inputs": in[i : i+1]}))
			if err != nil {
				errs <- err.Error()
				return
			}
			var m struct{ Outputs [][]float32 }
			if err := json.Unmarshal(resp, &m); err != nil || len(m.Outputs) != 1 {
				errs <- "bad answer " + string(resp)
				return
			}
			if d := m.Outputs[0][0] - want[i][0]; d > 1e-5 || d < -1e-5 {
				errs <- "row " + string(mustJSON(t, i)) + ": served " + string(mustJSON(t, m.Outputs[0])) + ", Predict " + string(mustJSON(t, want[i]))
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if calls := h.calls.Load(); calls >= int64(len(in)) || calls < int64(len(in))/8 {
		t.Errorf("%d Predict calls for %d concurrent requests with MaxBatch 8; want batches (4 to 31 calls)", calls, len(in))
	}
}

// TestBadRequests: each bad request gets its status and a JSON error
// naming what is wrong and what would be valid.
func TestBadRequests(t *testing.T) {
	p := predictor(t)
	h, err := NewHandler(p, Config{Input: boringInput, MaxBatch: 4, MaxBodyBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	url, _ := start(t, h)
	row := `[1,2,3,4,5,6,7,8]`
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		says                     string
	}{
		{"wrong path", "POST", "/predikt", `{}`, 404, "no endpoint /predikt; POST /predict"},
		{"GET", "GET", "/predict", ``, 405, "method GET; POST /predict with"},
		{"not JSON", "POST", "/predict", `inputs=1`, 400, `body is not {"inputs": [ROW, …]} with 1 to 4 rows of 8 float32 values`},
		{"unknown field", "POST", "/predict", `{"pixels": [` + row + `]}`, 400, `unknown field "pixels"`},
		{"no inputs", "POST", "/predict", `{"inputs": []}`, 400, `field "inputs": missing or empty`},
		{"short row", "POST", "/predict", `{"inputs": [` + row + `, [1,2,3]]}`, 400, "inputs[1]: got 3 values, want 8"},
		{"nested row", "POST", "/predict", `{"inputs": [[[1,2]]]}`, 400, `field "inputs.0.0": got a JSON array`},
		{"a string", "POST", "/predict", `{"inputs": [["1"]]}`, 400, `got a JSON string`},
		{"two values", "POST", "/predict", `{"inputs": [` + row + `]} {}`, 400, "more than one JSON value"},
		{"too many rows", "POST", "/predict", `{"inputs": [` + strings.Repeat(row+",", 4) + row + `]}`, 413, "5 rows, more than the 4 one request may carry"},
		{"body too large", "POST", "/predict", `{"inputs": [[` + strings.Repeat("0,", 3000) + `0]]}`, 413, "body is over 4096 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, msg := send(t, tc.method, url+tc.path, tc.body)
			if status != tc.status || !strings.Contains(msg, tc.says) {
				t.Errorf("status %d, error %q; want %d and an error saying %q", status, msg, tc.status, tc.says)
			}
		})
	}
}

// TestIntegerInputs: an int32 input takes whole numbers and refuses others
// by position.
func TestIntegerInputs(t *testing.T) {
	h, err := NewHandler(predictor(t), Config{Input: volt.InputSpec{DType: dtypes.Int32, Dims: []int{2}}, MaxBatch: 1})
	if err != nil {
		t.Fatal(err)
	}
	url, _ := start(t, h)
	status, msg := send(t, "POST", url+"/predict", `{"inputs": [[1, 2.5]]}`)
	if want := "inputs[0][1] = 2.5: the input is int32; want whole numbers"; status != 400 || !strings.Contains(msg, want) {
		t.Errorf("status %d, error %q; want 400 and %q", status, msg, want)
	}
}

// TestNewHandlerRefusesBadConfig: each bad field is named.
func TestNewHandlerRefusesBadConfig(t *testing.T) {
	p := predictor(t)
	for _, tc := range []struct {
		name string
		cfg  Config
		says string
	}{
		{"no dtype", Config{}, "Config.Input.DType invaliddtype: valid: float32, float64, int32, int64"},
		{"zero dim", Config{Input: volt.InputSpec{DType: dtypes.Float32, Dims: []int{0}}}, "Config.Input.Dims[0] = 0"},
		{"negative", Config{Input: boringInput, MaxBatch: -1}, "none may be negative"},
		{"rows over batch", Config{Input: boringInput, MaxBatch: 4, MaxRows: 5}, "Config.MaxRows 5 is more than MaxBatch 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewHandler(p, tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %v; want one saying %q", err, tc.says)
			}
		})
	}
	if _, err := NewHandler(nil, Config{Input: boringInput}); err == nil || !strings.Contains(err.Error(), "predictor is nil") {
		t.Errorf("nil predictor: error %v", err)
	}
}

// TestAfterClose: a request that reaches a closed handler gets 503 and a
// JSON error, not a panic.
func TestAfterClose(t *testing.T) {
	for _, maxBatch := range []int{1, 8} {
		h, err := NewHandler(predictor(t), Config{Input: boringInput, MaxBatch: maxBatch})
		if err != nil {
			t.Fatal(err)
		}
		h.Close()
		h.Close() // twice is fine
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", "/predict", strings.NewReader(`{"inputs": [[1,2,3,4,5,6,7,8]]}`)))
		if rec.Code != 503 || !strings.Contains(rec.Body.String(), "shutting down") {
			t.Errorf("MaxBatch %d: status %d, body %s; want 503", maxBatch, rec.Code, rec.Body.String())
		}
	}
}

// TestMountedOnOwnMux: a program mounts the handler at a path of its own
// mux, beside its own endpoints, and it answers there.
func TestMountedOnOwnMux(t *testing.T) {
	p := predictor(t)
	h, err := NewHandler(p, Config{Input: boringInput, MaxBatch: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	mux := http.NewServeMux()
	mux.Handle("POST /v1/models/boring", h)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) })
	in := rows(t, 2)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/models/boring", bytes.NewReader(mustJSON(t, map[string]any{"inputs": in}))))
	var got struct{ Outputs [][]float32 }
	if err := json.Unmarshal(rec.Body.Bytes(), &got); rec.Code != 200 || err != nil || len(got.Outputs) != 2 || got.Outputs[1][0] != direct(t, p, in)[1][0] {
		t.Errorf("status %d, body %s; want Predict's outputs", rec.Code, rec.Body.String())
	}
}
