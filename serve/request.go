package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
)

// request is the body of POST /predict.
type request struct {
	Inputs [][]float64 `json:"inputs"`
}

// badRequest is a request the handler refuses, with its status.
type badRequest struct {
	status int
	msg    string
}

func (e *badRequest) Error() string { return e.msg }

// want describes a valid body, for messages.
func (h *Handler) want() string {
	return fmt.Sprintf(`{"inputs": [ROW, …]} with 1 to %d rows of %d %s values each (the input's dimensions after the batch axis, %v, flattened)`,
		h.cfg.MaxRows, h.rowSize, dtypeName(h.cfg.Input.DType), h.cfg.Input.Dims)
}

// decode reads and checks one request's rows.
func (h *Handler) decode(w http.ResponseWriter, r *http.Request) ([][]float64, error) {
	var req request
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		var te *json.UnmarshalTypeError
		var me *http.MaxBytesError
		switch {
		case errors.As(err, &me):
			return nil, &badRequest{http.StatusRequestEntityTooLarge, fmt.Sprintf("body is over %d bytes; send at most %d rows per request", me.Limit, h.cfg.MaxRows)}
		case errors.As(err, &te):
			return nil, &badRequest{http.StatusBadRequest, fmt.Sprintf("field %q: got a JSON %s; want %s", te.Field, te.Value, h.want())}
		}
		return nil, &badRequest{http.StatusBadRequest, fmt.Sprintf("body is not %s: %v", h.want(), err)}
	}
	if dec.More() {
		return nil, &badRequest{http.StatusBadRequest, "body has more than one JSON value; send one " + h.want()}
	}
	switch n := len(req.Inputs); {
	case n == 0:
		return nil, &badRequest{http.StatusBadRequest, `field "inputs": missing or empty; want ` + h.want()}
	case n > h.cfg.MaxRows:
		return nil, &badRequest{http.StatusRequestEntityTooLarge, fmt.Sprintf(`field "inputs": %d rows, more than the %d one request may carry; split it`, n, h.cfg.MaxRows)}
	}
	integer := h.cfg.Input.DType == dtypes.Int32 || h.cfg.Input.DType == dtypes.Int64
	for i, row := range req.Inputs {
		if len(row) != h.rowSize {
			return nil, &badRequest{http.StatusBadRequest, fmt.Sprintf("inputs[%d]: got %d values, want %d (the input's dimensions after the batch axis, %v, flattened)", i, len(row), h.rowSize, h.cfg.Input.Dims)}
		}
		if !integer {
			continue
		}
		for j, v := range row {
			if v != math.Trunc(v) || (h.cfg.Input.DType == dtypes.Int32 && (v < math.MinInt32 || v > math.MaxInt32)) {
				return nil, &badRequest{http.StatusBadRequest, fmt.Sprintf("inputs[%d][%d] = %v: the input is %s; want whole numbers in its range", i, j, v, dtypeName(h.cfg.Input.DType))}
			}
		}
	}
	return req.Inputs, nil
}

// stack turns rows into one [len(rows), Dims…] tensor of the input's dtype.
func stack(rows [][]float64, in dtypes.DType, dims []int) *tensors.Tensor {
	shape := append([]int{len(rows)}, dims...)
	switch in {
	case dtypes.Float64:
		return tensors.FromFlatDataAndDimensions(flatten[float64](rows), shape...)
	case dtypes.Int32:
		return tensors.FromFlatDataAndDimensions(flatten[int32](rows), shape...)
	case dtypes.Int64:
		return tensors.FromFlatDataAndDimensions(flatten[int64](rows), shape...)
	}
	return tensors.FromFlatDataAndDimensions(flatten[float32](rows), shape...)
}

// flatten concatenates rows, converted to T.
func flatten[T float32 | float64 | int32 | int64](rows [][]float64) []T {
	var out []T
	for _, row := range rows {
		for _, v := range row {
			out = append(out, T(v))
		}
	}
	return out
}

// dtypeName is the dtype as Config's doc and numpy write it: float32.
func dtypeName(dt dtypes.DType) string { return strings.ToLower(dt.String()) }
