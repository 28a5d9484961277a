// Package epochflag is the -epochs flag of volt's examples. It takes what
// package cli takes for trainer.max_epochs: a positive number of epochs, or
// -1 for no limit. 0 is refused, with the reason: Lightning's
// max_epochs=0 trains no epoch (fit runs the sanity check and stops:
// "`Trainer.fit` stopped: `max_epochs=0` reached."), while volt.Config
// reads MaxEpochs 0 as its default, 1000 epochs, so taking it silently
// would train for 1000.
package epochflag

import (
	"errors"
	"flag"
	"strconv"
)

// ErrZero is the error of -epochs 0.
var ErrZero = errors.New("0 trains no epoch in Lightning (max_epochs=0), but volt reads 0 as its default (1000 epochs); give a positive number, or -1 for no limit")

// value is the flag.Value of -epochs.
type value struct{ n *int }

// String returns the value, for the usage text's default.
func (v value) String() string {
	if v.n == nil {
		return ""
	}
	return strconv.Itoa(*v.n)
}

// Set parses a number of epochs, refusing 0 and negatives other than -1.
func (v value) Set(s string) error {
	n, err := strconv.Atoi(s)
	switch {
	case err != nil:
		return errors.New("want a whole number of epochs (a positive number, or -1 for no limit)")
	case n == 0:
		return ErrZero
	case n < -1:
		return errors.New("want a positive number of epochs, or -1 for no limit")
	}
	*v.n = n
	return nil
}

// Int defines -epochs on fs with the default def and usage, and returns
// where the value goes. A bad value makes fs.Parse fail with the reason
// (and, as for any bad flag, the usage; the examples exit with status 2).
func Int(fs *flag.FlagSet, def int, usage string) *int {
	n := def
	fs.Var(value{&n}, "epochs", usage)
	return &n
}
