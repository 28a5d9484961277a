package volt

import (
	"fmt"
	"time"
)

// BatchLimit is how many batches of an epoch a loop runs: a count
// (Batches) or a fraction of the loader (Fraction). The two are distinct
// types, so a count can never be read as a fraction. Nil means every batch.
type BatchLimit interface {
	// resolve returns the number of batches out of total (-1: unknown),
	// -1 meaning "all of them".
	resolve(total int) (int, error)
	String() string
}

// Batches is a number of batches.
type Batches int

// Fraction is a fraction of an epoch's batches, in [0, 1].
type Fraction float64

// AcrossEpochs is a validation interval counted in training batches over the
// whole run rather than within each epoch (Lightning's integer
// val_check_interval with check_val_every_n_epoch=None).
type AcrossEpochs int

// Every is a validation interval in wall-clock time.
type Every time.Duration

// ValInterval says when validation runs inside a training epoch: Batches(n)
// (every n batches of each epoch), Fraction(f) (every f of the epoch),
// AcrossEpochs(n) (every n batches of the run) or Every(d) (every d of
// training time). Nil means once, after the epoch's last batch.
type ValInterval interface {
	String() string
	valInterval()
}

func (Batches) valInterval()      {}
func (Fraction) valInterval()     {}
func (AcrossEpochs) valInterval() {}
func (Every) valInterval()        {}

// String implements BatchLimit.
func (b Batches) String() string { return fmt.Sprintf("Batches(%d)", int(b)) }

// String implements BatchLimit.
func (f Fraction) String() string { return fmt.Sprintf("Fraction(%v)", float64(f)) }

// String implements ValInterval.
func (a AcrossEpochs) String() string { return fmt.Sprintf("AcrossEpochs(%d)", int(a)) }

// String implements ValInterval.
func (e Every) String() string { return fmt.Sprintf("Every(%s)", time.Duration(e)) }

func (b Batches) resolve(total int) (int, error) {
	if total >= 0 {
		return min(int(b), total), nil
	}
	return int(b), nil
}

func (f Fraction) resolve(total int) (int, error) {
	switch {
	case f == 1:
		return -1, nil
	case f == 0:
		return 0, nil
	case total < 0:
		return 0, fmt.Errorf("%s needs a loader with a known length; use Batches(n) for iterable data", f)
	}
	n := int(float64(total) * float64(f))
	if n == 0 {
		return 0, fmt.Errorf("%s of %d batches is less than one batch; use a larger fraction or Batches(1)", f, total)
	}
	return n, nil
}

// validLimit checks a limit's value, naming the field.
func validLimit(field string, l BatchLimit) error {
	switch v := l.(type) {
	case nil:
	case Batches:
		if v < 0 {
			return &fieldError{field, fmt.Errorf("volt.Batches must be >= 0, got %d", int(v))}
		}
	case Fraction:
		if v < 0 || v > 1 || v != v {
			return &fieldError{field, fmt.Errorf("volt.Fraction must be in [0, 1], got %v", float64(v))}
		}
	default:
		return &fieldError{field, fmt.Errorf("unknown limit %T; use volt.Batches(n) or volt.Fraction(f)", l)}
	}
	return nil
}

// validValInterval checks a validation interval, naming the fields involved.
func validValInterval(c *Config) error {
	switch v := c.ValCheckInterval.(type) {
	case nil:
	case Batches:
		if v < 1 {
			return &fieldError{"ValCheckInterval", fmt.Errorf("volt.Batches must be >= 1, got %d", int(v))}
		}
	case Fraction:
		if v <= 0 || v > 1 || v != v {
			return &fieldError{"ValCheckInterval", fmt.Errorf("volt.Fraction must be in (0, 1], got %v", float64(v))}
		}
	case AcrossEpochs:
		if v < 1 {
			return &fieldError{"ValCheckInterval", fmt.Errorf("volt.AcrossEpochs must be >= 1, got %d", int(v))}
		}
		if c.CheckValEveryNEpoch > 1 {
			return fmt.Errorf("Config.ValCheckInterval=%s counts batches across epochs, so Config.CheckValEveryNEpoch=%d cannot apply; use one or the other", v, c.CheckValEveryNEpoch)
		}
	case Every:
		if v <= 0 {
			return &fieldError{"ValCheckInterval", fmt.Errorf("volt.Every must be a positive duration, got %s", time.Duration(v))}
		}
	default:
		return &fieldError{"ValCheckInterval", fmt.Errorf("unknown interval %T; use volt.Batches, volt.Fraction, volt.AcrossEpochs or volt.Every", v)}
	}
	return nil
}

// limitOf resolves limit for a loader of n batches (-1 unknown): the number
// of batches to run, -1 meaning all.
func limitOf(field string, limit BatchLimit, n int) (int, error) {
	if limit == nil {
		return -1, nil
	}
	k, err := limit.resolve(n)
	if err != nil {
		return 0, &fieldError{field, err}
	}
	if k >= 0 && n >= 0 && k >= n {
		return -1, nil
	}
	return k, nil
}

// effectiveBatches is the number of batches a loop runs: the loader's n
// capped by limit k (-1: all); -1 when unknown.
func effectiveBatches(n, k int) int {
	switch {
	case k < 0:
		return n
	case n < 0:
		return k
	}
	return min(n, k)
}

// fieldError is an error in the value of Config field Field.
type fieldError struct {
	field string
	err   error
}

// Error implements error: "Config.<field>: <err>".
func (e *fieldError) Error() string { return "Config." + e.field + ": " + e.err.Error() }

// Unwrap returns the error without the field.
func (e *fieldError) Unwrap() error { return e.err }
