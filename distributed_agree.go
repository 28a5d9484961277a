package volt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/voltml/volt/dist"
)

// Agreement across ranks: the loops make every decision that changes what
// comes next (stop, validate, end the epoch) from values every rank shares,
// so that the ranks make the same collective calls in the same order. A
// stop request (Trainer.Stop, EarlyStopping, a NaN policy that stops), a
// handled signal or a cancelled context on any one rank is shared at each
// training batch's end (agreeAtBatchEnd) and before each epoch
// (agreeBeforeEpoch); everything else that fails on one rank aborts the job.

// agreeAtBatchEnd shares the stop requests, signals and cancellations of
// every rank after a training batch's hooks, before the validation it may
// schedule: a stop requested on any rank stops every rank after this batch,
// and a signal or cancellation on any rank interrupts every rank now.
func (t *Trainer) agreeAtBatchEnd(ctx context.Context) error {
	if !t.ddp.on {
		return nil
	}
	return t.agree(ctx)
}

// agreeAtEpochStart shares the stop requests made in OnTrainEpochStart, so
// that every rank trains the epoch's batches or none does.
func (t *Trainer) agreeAtEpochStart(ctx context.Context) error {
	if !t.ddp.on {
		return nil
	}
	return t.agree(ctx)
}

// signalToHonour returns the handled signal that interrupts Fit after this
// batch, or nil. In a data-parallel job it is one the ranks agreed on at
// this batch's end: a signal that arrives after that agreement (the
// launcher signals every rank at once, so one rank may see it a moment
// later than another) waits for the next batch's, so that every rank
// stops after the same batch and saves the checkpoint together.
func (t *Trainer) signalToHonour() os.Signal {
	if t.ddp.on && !t.ddp.agreedInterrupt {
		return nil
	}
	return t.run.signals.signalled()
}

// agreeBeforeEpoch shares the stop requests made at an epoch's end
// (EarlyStopping, ModelCheckpoint's hooks) before Fit decides whether to
// run another epoch.
func (t *Trainer) agreeBeforeEpoch(ctx context.Context) error {
	if !t.ddp.on {
		return nil
	}
	return t.agree(ctx)
}

// agree all-reduces (max) this rank's [stop, signal, cancelled, validation
// time] flags and applies the result: a peer's stop becomes this rank's
// stop, a peer's signal this rank's signal, a peer's cancellation an
// interruption, and a validation that any rank's clock says is due
// (ValCheckInterval Every(d)) is due on every rank.
func (t *Trainer) agree(ctx context.Context) error {
	rank := int64(t.ddp.group.Rank()) + 1
	flags := []int64{0, 0, 0, 0}
	if t.stop.requested {
		flags[0] = rank
	}
	if s, ok := t.run.signals.signalled().(syscall.Signal); ok {
		flags[1] = int64(s)
	}
	if ctx.Err() != nil {
		flags[2] = rank
	}
	fit := t.run.fit
	if fit != nil && fit.clockSaysValidate() {
		flags[3] = 1
	}
	if err := t.ddp.group.AllReduceInt64(flags, dist.Max); err != nil {
		return fmt.Errorf("volt: agreeing on stop requests across ranks: %w", err)
	}
	if fit != nil {
		fit.agreedValTime = flags[3] != 0
	}
	if flags[0] != 0 && !t.stop.requested {
		t.Stop(fmt.Sprintf("requested on rank %d", flags[0]-1))
	}
	if flags[1] != 0 && t.run.signals != nil {
		t.run.signals.adopt(syscall.Signal(flags[1]))
	}
	if flags[2] != 0 {
		t.ddp.agreedInterrupt = true
		if ctx.Err() != nil {
			return t.interrupted(ctx)
		}
		return fmt.Errorf("volt: %s interrupted at epoch %d, global step %d: rank %d's context was cancelled: %w",
			t.state.Fn, t.CurrentEpoch(), t.GlobalStep(), flags[2]-1, context.Canceled)
	}
	if flags[1] != 0 {
		t.ddp.agreedInterrupt = true
	}
	return nil
}

// abortOnFailure ends every rank of the job when this rank's run failed
// with an error the ranks did not agree on (anything but an agreed signal
// or cancellation): the others would otherwise wait in their next
// collective call. Group.Abort prints the rank and the error and does not
// return. Nothing happens in a single process, or when err is nil.
// leaveAgreedStopTogether makes the ranks of a run that ended on an
// agreed signal, cancellation or non-finite value (abortOnFailure let them
// return) leave it together, after every rank's teardown: the program then
// exits non-zero, and mpirun ends the other ranks one second after the
// first such exit, which must not cut rank 0's loggers short.
func (t *Trainer) leaveAgreedStopTogether(err error) error {
	if err == nil || !t.ddp.on || !(t.ddp.agreedInterrupt || t.ddp.agreedNonFinite) {
		return nil
	}
	if berr := t.ddp.group.Barrier(); berr != nil {
		return fmt.Errorf("volt: waiting for the other ranks to end the %s they agreed to stop: %w", t.state.Fn, berr)
	}
	return nil
}

func (t *Trainer) abortOnFailure(err error) {
	if err == nil || !t.ddp.on {
		return
	}
	var signalled *InterruptedError
	if t.ddp.agreedInterrupt && (errors.As(err, &signalled) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return
	}
	var nonFinite *NonFiniteError
	if t.ddp.agreedNonFinite && errors.As(err, &nonFinite) {
		return
	}
	t.ddp.group.Abort(fmt.Errorf("volt: %s: %w", t.state.Fn, err))
}
