package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/voltml/volt"
)

// Pixels is the length of one request's image: 28×28, flattened.
const Pixels = 784

// request is the body of POST /predict.
type request struct {
	Pixels []float32 `json:"pixels"`
}

// response is the answer to a good request.
type response struct {
	Class int32 `json:"class"`
}

// errorResponse is the answer to a bad one.
type errorResponse struct {
	Error string `json:"error"`
}

// job is one request waiting in the batcher.
type job struct {
	pixels []float32
	done   chan result
}

type result struct {
	class int32
	err   error
}

// Server answers POST /predict with the predictor's class for one image.
// With MaxBatch > 1 the requests are collected into batches: up to MaxBatch
// of them, or what arrived within Wait of the first, then one Predict call
// over the stacked rows, each request getting its own row back.
type Server struct {
	p        *volt.Predictor
	maxBatch int
	wait     time.Duration

	jobs    chan job
	stopped chan struct{}
	once    sync.Once
}

// NewServer serves p; maxBatch 1 (or less) calls the predictor once per
// request, with no batching.
func NewServer(p *volt.Predictor, maxBatch int, wait time.Duration) *Server {
	s := &Server{p: p, maxBatch: max(maxBatch, 1), wait: wait, stopped: make(chan struct{})}
	if s.maxBatch > 1 {
		s.jobs = make(chan job, s.maxBatch)
		go s.batcher()
	} else {
		close(s.stopped)
	}
	return s
}

// Close stops the batcher once every handler has returned (call it after
// http.Server.Shutdown).
func (s *Server) Close() {
	s.once.Do(func() {
		if s.jobs != nil {
			close(s.jobs)
		}
	})
	<-s.stopped
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/predict" {
		writeJSON(w, http.StatusNotFound, errorResponse{fmt.Sprintf("no endpoint %s; POST /predict with {\"pixels\": [%d numbers]}", r.URL.Path, Pixels)})
		return
	}
	if r.Method != http.MethodPost {
		writeJSON(w, http.StatusMethodNotAllowed, errorResponse{fmt.Sprintf("method %s; POST /predict with {\"pixels\": [%d numbers]}", r.Method, Pixels)})
		return
	}
	pixels, err := decode(r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, errorResponse{err.Error()})
		return
	}
	class, err := s.predict(r.Context(), pixels)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, errorResponse{err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, response{class})
}

// decode reads one request's pixels, saying what would be valid when the
// body is not {"pixels": [784 numbers]}.
func decode(r *http.Request) ([]float32, error) {
	var req request
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("field %q: got a JSON %s, want %d numbers (the 28×28 image's pixels, row by row, as in training: 0 to 1)", te.Field, te.Value, Pixels)
		}
		return nil, fmt.Errorf("body is not {\"pixels\": [%d numbers]}: %v", Pixels, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("body has more than one JSON value; send one {\"pixels\": [%d numbers]}", Pixels)
	}
	if len(req.Pixels) != Pixels {
		return nil, fmt.Errorf("field \"pixels\": got %d numbers, want %d (a 28×28 image, flattened)", len(req.Pixels), Pixels)
	}
	return req.Pixels, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// predict returns the class of one image, through the batcher or not.
func (s *Server) predict(ctx context.Context, pixels []float32) (int32, error) {
	if s.jobs == nil {
		y, err := s.p.Predict([][]float32{pixels})
		if err != nil {
			return 0, err
		}
		return y.Value().([]int32)[0], nil
	}
	j := job{pixels: pixels, done: make(chan result, 1)}
	select {
	case s.jobs <- j:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	r := <-j.done // the batcher always answers a job it took
	return r.class, r.err
}

// batcher collects jobs into batches and runs each with one Predict call.
func (s *Server) batcher() {
	defer close(s.stopped)
	batch := make([]job, 0, s.maxBatch)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		first, ok := <-s.jobs
		if !ok {
			return
		}
		batch = append(batch[:0], first)
		timer.Reset(s.wait)
	collect:
		for len(batch) < s.maxBatch {
			select {
			case j, ok := <-s.jobs:
				if !ok {
					break collect
				}
				batch = append(batch, j)
			case <-timer.C:
				break collect
			}
		}
		timer.Stop()
		s.run(batch)
	}
}

// run predicts the stacked rows of batch and answers each job with its row.
func (s *Server) run(batch []job) {
	rows := make([][]float32, len(batch))
	for i, j := range batch {
		rows[i] = j.pixels
	}
	y, err := s.p.Predict(rows)
	var classes []int32
	if err == nil {
		classes = y.Value().([]int32)
	}
	for i, j := range batch {
		if err != nil {
			j.done <- result{err: err}
		} else {
			j.done <- result{class: classes[i]}
		}
	}
}
