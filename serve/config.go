package serve

import (
	"fmt"
	"time"

	"github.com/gomlx/compute/dtypes"
	"github.com/voltml/volt"
)

// Config configures a Handler. Only Input is required.
type Config struct {
	// Input is the module's one input: its dtype (float32, float64, int32
	// or int64) and its dimensions after the batch axis. Each row of a
	// request holds the product of Dims values.
	Input volt.InputSpec
	// MaxBatch is the most rows one Predict call takes: requests arriving
	// within Wait of each other are stacked up to it. 1 calls the predictor
	// once per request, without batching. 0 means 16.
	MaxBatch int
	// Wait is the longest the first request of a batch waits for others
	// to fill it. 0 means 2ms.
	Wait time.Duration
	// MaxRows is the most rows one request may carry (at most MaxBatch
	// when batching). 0 means MaxBatch, or 64 without batching.
	MaxRows int
	// MaxBodyBytes bounds a request's body; a larger one gets status 413.
	// 0 means 32 bytes per value of MaxRows rows, at least 64 KiB.
	MaxBodyBytes int64
}

// withDefaults returns c with its zero fields set, or an error naming the
// field that is invalid.
func (c Config) withDefaults() (Config, error) {
	switch c.Input.DType {
	case dtypes.Float32, dtypes.Float64, dtypes.Int32, dtypes.Int64:
	default:
		return c, fmt.Errorf("serve: Config.Input.DType %s: valid: float32, float64, int32, int64", dtypeName(c.Input.DType))
	}
	for i, d := range c.Input.Dims {
		if d < 1 {
			return c, fmt.Errorf("serve: Config.Input.Dims[%d] = %d: every dimension must be at least 1", i, d)
		}
	}
	if c.MaxBatch < 0 || c.MaxRows < 0 || c.MaxBodyBytes < 0 || c.Wait < 0 {
		return c, fmt.Errorf("serve: Config MaxBatch %d, MaxRows %d, MaxBodyBytes %d, Wait %s: none may be negative (0 takes the default)",
			c.MaxBatch, c.MaxRows, c.MaxBodyBytes, c.Wait)
	}
	if c.MaxBatch == 0 {
		c.MaxBatch = 16
	}
	if c.Wait == 0 {
		c.Wait = 2 * time.Millisecond
	}
	if c.MaxRows == 0 {
		c.MaxRows = c.MaxBatch
		if c.MaxBatch == 1 {
			c.MaxRows = 64
		}
	}
	if c.MaxBatch > 1 && c.MaxRows > c.MaxBatch {
		return c, fmt.Errorf("serve: Config.MaxRows %d is more than MaxBatch %d: a request must fit one batch", c.MaxRows, c.MaxBatch)
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = max(int64(32*c.MaxRows*rowSize(c.Input.Dims)), 64<<10)
	}
	return c, nil
}

// rowSize is the number of values in one row of an input with dims.
func rowSize(dims []int) int {
	n := 1
	for _, d := range dims {
		n *= d
	}
	return n
}
