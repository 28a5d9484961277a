package volt

import (
	"errors"
	"flag"
	"strconv"
)

// ErrZeroEpochs is the error of an epochs flag (EpochsFlag) given 0.
// Lightning's max_epochs=0 trains no epoch (fit runs the sanity check and
// stops: "`Trainer.fit` stopped: `max_epochs=0` reached."), while
// Config.MaxEpochs 0 is volt's default, 1000 epochs: passing a flag's 0 on
// to Config silently would train for 1000, so the flag refuses it, as
// package cli refuses trainer.max_epochs 0.
var ErrZeroEpochs = errors.New("0 trains no epoch in Lightning (max_epochs=0), but volt reads 0 as its default (1000 epochs); give a positive number, or -1 for no limit")

// EpochsFlag defines a flag on fs (flag.CommandLine for the program's own
// flags) for Config.MaxEpochs, as flag.Int does, and returns where its
// value goes: a positive number of epochs, or -1 for no limit. 0 is refused
// with ErrZeroEpochs, other negatives with what is valid, so that the
// flag's value means the same in Config as Lightning's max_epochs:
//
//	epochs := volt.EpochsFlag(flag.CommandLine, "epochs", 30, "maximum epochs (-1: no limit)")
//	flag.Parse() // -epochs 0: the reason and the usage, exit 2
//	trainer, err := volt.NewTrainer(volt.Config{MaxEpochs: *epochs})
func EpochsFlag(fs *flag.FlagSet, name string, value int, usage string) *int {
	n := value
	fs.Var(epochsValue{&n}, name, usage)
	return &n
}

// epochsValue is EpochsFlag's flag.Value.
type epochsValue struct{ n *int }

// String returns the value, for the usage text's default.
func (v epochsValue) String() string {
	if v.n == nil { // the zero value the flag package makes to compare defaults
		return ""
	}
	return strconv.Itoa(*v.n)
}

// Set parses a number of epochs, refusing 0 and negatives other than -1.
func (v epochsValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	switch {
	case err != nil:
		return errors.New("want a whole number of epochs (a positive number, or -1 for no limit)")
	case n == 0:
		return ErrZeroEpochs
	case n < -1:
		return errors.New("want a positive number of epochs, or -1 for no limit")
	}
	*v.n = n
	return nil
}
