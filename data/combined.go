package data

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// CombineMode says how a CombinedLoader walks its loaders (Lightning's
// CombinedLoader modes).
type CombineMode string

const (
	// MaxSizeCycle runs until the longest loader is exhausted, restarting
	// the shorter ones: a restarted loader begins a new pass with the same
	// epoch number, so it yields the same batches in the same order again.
	// It needs the length of every loader.
	MaxSizeCycle CombineMode = "max_size_cycle"
	// MaxSize runs until the longest loader is exhausted; a loader that is
	// exhausted contributes nothing (its part is absent from the batch).
	MaxSize CombineMode = "max_size"
	// MinSize runs until the shortest loader is exhausted.
	MinSize CombineMode = "min_size"
	// Sequential runs one loader after the other: each batch comes from one
	// loader, unchanged except for Batch.DataloaderIdx.
	Sequential CombineMode = "sequential"
)

// combineModes lists the valid modes, for error messages.
var combineModes = []CombineMode{MaxSizeCycle, MaxSize, MinSize, Sequential}

// CombinedLoader is a Loader that walks several loaders together, like
// Lightning's CombinedLoader.
//
// In MaxSizeCycle, MaxSize and MinSize modes each step pulls one batch from
// every (non-exhausted) loader and yields a single combined batch: one Part
// per loader that produced a batch, in loader order, with Inputs and Labels
// the parts' tensors concatenated in that order and Size the first part's
// Size (use Batch.Part or Batch.Split to get one loader's batch back). In
// Sequential mode the loaders' batches are yielded one loader after the
// other, with Batch.DataloaderIdx set to the loader index.
type CombinedLoader struct {
	// Loaders are the loaders to combine; at least one, none nil.
	Loaders []Loader
	// Names name the loaders in Batch.Parts and errors; optional (empty
	// means "0", "1", ...), otherwise one distinct non-empty name per loader.
	Names []string
	// Mode is how the loaders are walked; empty means MaxSizeCycle.
	Mode CombineMode
}

var _ Loader = (*CombinedLoader)(nil)

// validator is implemented by loaders that can check their configuration,
// such as *DataLoader.
type validator interface {
	Validate() error
}

// Validate checks the configuration, and that of every loader that has a
// Validate method, and returns an error naming every bad field, or nil.
func (c *CombinedLoader) Validate() error {
	var errs []error
	if len(c.Loaders) == 0 {
		errs = append(errs, errors.New("data.CombinedLoader.Loaders: must hold at least one loader, got none"))
	}
	for i, l := range c.Loaders {
		if l == nil {
			errs = append(errs, fmt.Errorf("data.CombinedLoader.Loaders[%d]: must not be nil", i))
		} else if v, ok := l.(validator); ok {
			if err := v.Validate(); err != nil {
				errs = append(errs, fmt.Errorf("data.CombinedLoader.Loaders[%d]: %w", i, err))
			}
		}
	}
	errs = append(errs, c.validateNames()...)
	mode, err := c.mode()
	if err != nil {
		errs = append(errs, err)
	} else if mode == MaxSizeCycle && c.loadersSet() {
		errs = append(errs, c.validateCycle()...)
	}
	return errors.Join(errs...)
}

// validateNames checks Names: empty, or one distinct non-empty name per loader.
func (c *CombinedLoader) validateNames() []error {
	if len(c.Names) == 0 {
		return nil
	}
	if len(c.Names) != len(c.Loaders) {
		return []error{fmt.Errorf("data.CombinedLoader.Names: must be empty (names \"0\", \"1\", ...) "+
			"or hold one name per loader, got %d names for %d loaders", len(c.Names), len(c.Loaders))}
	}
	var errs []error
	first := make(map[string]int, len(c.Names))
	for i, name := range c.Names {
		if name == "" {
			errs = append(errs, fmt.Errorf("data.CombinedLoader.Names[%d]: must not be empty", i))
			continue
		}
		if j, dup := first[name]; dup {
			errs = append(errs, fmt.Errorf("data.CombinedLoader.Names[%d]: %q duplicates Names[%d]", i, name, j))
			continue
		}
		first[name] = i
	}
	return errs
}

// validateCycle checks that MaxSizeCycle can cycle every loader: each has a
// known length, and none is empty unless all are.
func (c *CombinedLoader) validateCycle() []error {
	var errs []error
	lens := c.lengths()
	longest := 0
	for i, n := range lens {
		if n < 0 {
			errs = append(errs, fmt.Errorf("data.CombinedLoader.Mode: %q needs the length of every loader, "+
				"Loaders[%d] (%q) has an unknown length (NumBatches() = -1); use %q, %q or %q",
				MaxSizeCycle, i, c.name(i), MaxSize, MinSize, Sequential))
		}
		longest = max(longest, n)
	}
	for i, n := range lens {
		if n == 0 && longest > 0 {
			errs = append(errs, fmt.Errorf("data.CombinedLoader.Mode: %q cannot cycle Loaders[%d] (%q): "+
				"it has no batches while another loader has %d", MaxSizeCycle, i, c.name(i), longest))
		}
	}
	return errs
}

// mode returns the effective Mode, or an error listing the valid ones.
func (c *CombinedLoader) mode() (CombineMode, error) {
	switch c.Mode {
	case "":
		return MaxSizeCycle, nil
	case MaxSizeCycle, MaxSize, MinSize, Sequential:
		return c.Mode, nil
	}
	valid := make([]string, len(combineModes))
	for i, m := range combineModes {
		valid[i] = strconv.Quote(string(m))
	}
	return "", fmt.Errorf("data.CombinedLoader.Mode: unknown mode %q, valid modes are %s (empty means %q)",
		c.Mode, strings.Join(valid, ", "), MaxSizeCycle)
}

// loadersSet reports whether there is at least one loader and none is nil.
func (c *CombinedLoader) loadersSet() bool {
	if len(c.Loaders) == 0 {
		return false
	}
	for _, l := range c.Loaders {
		if l == nil {
			return false
		}
	}
	return true
}

// name returns the name of loader i: Names[i], or its index when Names is
// empty (or, for an invalid configuration, too short).
func (c *CombinedLoader) name(i int) string {
	if i < len(c.Names) && len(c.Names) == len(c.Loaders) {
		return c.Names[i]
	}
	return strconv.Itoa(i)
}

// lengths returns the NumBatches of every loader.
func (c *CombinedLoader) lengths() []int {
	lens := make([]int, len(c.Loaders))
	for i, l := range c.Loaders {
		lens[i] = l.NumBatches()
	}
	return lens
}

// NumBatches returns the number of batches per epoch: the longest loader's
// for MaxSizeCycle and MaxSize, the shortest's for MinSize, the sum for
// Sequential; -1 when a loader's length is unknown; 0 when there are no
// loaders, one is nil, or Mode is unknown.
func (c *CombinedLoader) NumBatches() int {
	mode, err := c.mode()
	if err != nil || !c.loadersSet() {
		return 0
	}
	lens := c.lengths()
	total := lens[0]
	if mode == Sequential {
		total = 0
	}
	for _, n := range lens {
		if n < 0 {
			return -1
		}
		switch mode {
		case MaxSizeCycle, MaxSize:
			total = max(total, n)
		case MinSize:
			total = min(total, n)
		case Sequential:
			total += n
		}
	}
	return total
}
