package main

import (
	"time"

	"github.com/gomlx/compute/dtypes"
	"github.com/voltml/volt"
	"github.com/voltml/volt/serve"
)

// Pixels is the length of one image: 28×28, flattened.
const Pixels = 784

// request is package serve's request body for images: {"inputs": [[784
// numbers], …]}.
type request struct {
	Inputs [][]float32 `json:"inputs"`
}

// response is package serve's answer for the MLP, whose PredictStep gives
// one class per image: {"outputs": [7, …]}.
type response struct {
	Outputs []int32 `json:"outputs"`
}

// newHandler is package serve's handler over p for [batch, 784] float32
// images: up to maxBatch images in one Predict call, waiting at most wait
// for a batch to fill.
func newHandler(p *volt.Predictor, maxBatch int, wait time.Duration) (*serve.Handler, error) {
	return serve.NewHandler(p, serve.Config{Input: volt.InputSpec{DType: dtypes.Float32, Dims: []int{Pixels}},
		MaxBatch: maxBatch, Wait: wait})
}
