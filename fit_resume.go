package volt

// This file is the fit loop's resumable state: where a Fit continues
// after a restore (the resume point), the loop counters, and the training
// stream's positions (stream_resume.go). Its state part, fitLoopPart,
// saves them as the trainer state's "progress" and "resume", and the epoch
// loop asks it where the next epoch continues (enterEpoch).

// resumePoint says where a resumed Fit continues: at batch Batch of epoch
// Epoch, with the validation that followed batch Batch-1 already done or not.
// LastBatchDone says that batch Batch-1 was the epoch's last: only the
// epoch's end remains (its validation if not done, OnTrainEpochEnd, the
// plateau schedulers' step), which a loader of unknown length cannot tell.
// Stepped says whether batch Batch-1 stepped the optimizer (nil in older
// checkpoints: taken as stepped), ValidationPending that a due validation
// waits for the end of the accumulation window: with them the resumed run
// validates after the same batch as the uninterrupted one.
type resumePoint struct {
	Epoch             int   `json:"epoch"`
	Batch             int   `json:"batch"`
	ValidationDone    bool  `json:"validation_done"`
	LastBatchDone     bool  `json:"last_batch_done,omitempty"`
	Stepped           *bool `json:"stepped,omitempty"`
	ValidationPending bool  `json:"validation_pending,omitempty"`
	// StepLogs is set for a checkpoint taken in OnTrainBatchEnd, before
	// the batch's step values went to the loggers: true when they were due
	// (the resumed run sends them first), false when they were to be
	// dropped (not at the LogEveryNSteps cadence).
	StepLogs *bool `json:"step_logs,omitempty"`
	// EpochLogs is set for a checkpoint taken in OnTrainEpochEnd, before
	// the epoch's values went to the loggers: the resumed run sends them
	// before the next epoch.
	EpochLogs bool `json:"epoch_logs,omitempty"`
	// StreamState is the training stream's position after Batch batches
	// (data.Batch.StreamState; rank 0's in a data-parallel job), for a
	// data.StatefulIterable to resume at once.
	StreamState []byte `json:"stream_state,omitempty"`
}

// inEpoch reports whether the run continues inside epoch Epoch (some of its
// batches or a validation done) rather than at its start.
func (r *resumePoint) inEpoch() bool { return r.Batch > 0 || r.ValidationDone }

// fitResume is the fit loop's state that outlives a run: where the next
// Fit continues after a restore, and the training stream's positions.
type fitResume struct {
	// resume is where the next Fit continues, after a restore, until the
	// resumed epoch's OnTrainEpochStart has run (nil: with the epoch after
	// the last completed one).
	resume *resumePoint
	// resumedFrom is the file a Fit resumes from ("" otherwise).
	resumedFrom string
	// restoredEpochs is the completed-epoch count the restored checkpoint
	// recorded (an epoch-end checkpoint: the index of the epoch it ended),
	// Lightning's current_epoch when a resumed Fit first asks for its
	// training loader.
	restoredEpochs int
	stream         streamNotes // the training stream's positions
}

// inEpoch reports whether the next epoch continues one that a restored
// checkpoint was taken inside.
func (f *fitResume) inEpoch() bool { return f.resume != nil && f.resume.inEpoch() }

// batchesDone returns the batches of the next epoch that the run resumed
// from already trained (0 unless it continues one: inEpoch).
func (f *fitResume) batchesDone() int {
	if !f.inEpoch() {
		return 0
	}
	return f.resume.Batch
}

// epochResume is where the next training epoch continues.
type epochResume struct {
	// resumed: the epoch is one a restored checkpoint was taken inside;
	// the others start at their first batch.
	resumed bool
	// skip is the batches already trained; validationDone, whether the
	// validation after the last of them ran, validationPending whether a
	// due one waits for the end of the accumulation window; lastBatchDone,
	// whether the last of them was the epoch's last.
	skip                                             int
	validationDone, validationPending, lastBatchDone bool
	// stepped says whether the last batch trained stepped the optimizer
	// (true at an epoch's start).
	stepped bool
	// stepLogs, for a checkpoint taken in OnTrainBatchEnd, says whether
	// that batch's step values go to the loggers (true) or are dropped.
	stepLogs *bool
}

// enterEpoch returns where the next training epoch continues: where the
// restored checkpoint was taken when it was taken inside that epoch, else
// at its start. The checkpoint's pending step values are handed over once:
// a checkpoint taken before the restored point is reached (which copies
// the resume point) must not send them again.
func (f *fitResume) enterEpoch() epochResume {
	if !f.inEpoch() {
		return epochResume{stepped: true}
	}
	r := f.resume
	e := epochResume{resumed: true, skip: r.Batch, validationDone: r.ValidationDone, validationPending: r.ValidationPending,
		lastBatchDone: r.LastBatchDone, stepped: true, stepLogs: r.StepLogs}
	if r.Stepped != nil {
		e.stepped = *r.Stepped
	}
	r.StepLogs = nil
	return e
}

// reached drops the resume point once the resumed epoch's
// OnTrainEpochStart has run: a checkpoint taken from then on records where
// the run is.
func (f *fitResume) reached() { f.resume = nil }

// takeEpochLogs reports, once, whether the restored checkpoint was taken in
// an epoch's OnTrainEpochEnd before the epoch's values reached the loggers
// (resumePoint.EpochLogs): the resumed run sends them.
func (f *fitResume) takeEpochLogs() bool {
	r := f.resume
	if r == nil || !r.EpochLogs {
		return false
	}
	r.EpochLogs = false
	return true
}

// fitLoopPart is the fit loop's state part: the loop counters
// ("progress") and where a Fit resumed from the checkpoint continues
// ("resume", with the training stream's position), from what the run in
// progress records.
type fitLoopPart struct {
	fit      *fitResume
	fn       Stage     // the run in progress
	progress *Progress // the trainer's counters
	run      *run
}

// fitLoopPart returns the fit loop's state part.
func (t *Trainer) fitLoopPart() fitLoopPart {
	return fitLoopPart{fit: &t.ckpt.fit, fn: t.state.Fn, progress: &t.progress, run: t.run}
}

func (fitLoopPart) stateKey() string { return "fit loop" }

func (fitLoopPart) members() []string { return []string{"progress", "resume"} }

func (p fitLoopPart) save(st *stateDoc) error {
	progress := *p.progress
	r := p.resumePointNow()
	progress.settle()
	if err := st.put("progress", progress); err != nil {
		return err
	}
	return st.putNonEmpty("resume", r)
}

// load restores the counters and the resume point; the epoch counter is
// the resume point's epoch, started when the run continues inside it.
func (p fitLoopPart) load(st *stateDoc) error {
	var progress Progress
	var r *resumePoint
	if _, err := st.get("progress", &progress); err != nil {
		return err
	}
	if _, err := st.get("resume", &r); err != nil {
		return err
	}
	*p.progress = progress
	f := p.fit
	f.resume, f.resumedFrom, f.restoredEpochs = r, st.path, int(progress.Epoch.Total.Completed)
	f.stream.restore(r)
	if r != nil {
		e := int64(r.Epoch)
		if r.inEpoch() {
			p.progress.Epoch.Total = Counter{Ready: e + 1, Started: e + 1, Processed: e, Completed: e}
		} else {
			p.progress.Epoch.Total = Counter{Ready: e, Started: e, Processed: e, Completed: e}
		}
		p.progress.Epoch.Current = p.progress.Epoch.Total
	}
	return nil
}

// resumePointNow says where a run restored from a checkpoint taken now
// should continue, from the point the last run recorded: inside a Fit's
// training epoch, at the next unseen batch (after or before the validation
// it scheduled); at or after a training epoch's end, with the next epoch;
// anywhere else (before training, after it, in another kind of run), with
// the epoch after the last completed one.
func (part fitLoopPart) resumePointNow() *resumePoint {
	p, run := part.progress, part.run
	switch {
	case part.fn != StageFit:
	case part.fit.resume != nil:
		// A resumed Fit that has not reached its restored point yet (its
		// OnFitStart, sanity check, OnTrainStart, the resumed epoch's
		// OnTrainEpochStart) continues from that point.
		r := *part.fit.resume
		return &r
	case p.At == PointTrainEpochEnd:
		// The epoch's batches are processed; its completion may or may
		// not be counted yet.
		return &resumePoint{Epoch: int(p.Epoch.Total.Processed), EpochLogs: run.epochEndLogs}
	case p.At.inTrainEpoch():
		// The epoch is not completed: Completed is its index.
		r := &resumePoint{Epoch: int(p.Epoch.Total.Completed), Batch: int(p.TrainBatch.Current.Processed), ValidationDone: p.At.validationDone()}
		r.StreamState = part.fit.stream.stateAt(r.Epoch, r.Batch)
		if l := run.fit; l != nil {
			stepped := l.lastStepped
			// Pending: a due validation waits for the window's end, or
			// the cadence runs one right after this batch (decided before
			// OnTrainBatchEnd, where the checkpoint is taken).
			pending := l.valDue || p.At == PointTrainBatchEnd && l.valAfterBatch
			r.LastBatchDone, r.Stepped, r.ValidationPending = l.epochFinished, &stepped, pending
		}
		if run.inBatchEnd {
			due := run.batchEndStepLogs
			r.StepLogs = &due
		}
		return r
	}
	return &resumePoint{Epoch: int(p.Epoch.Total.Completed)}
}

// settle rolls every in-flight counter forward to completed: a checkpoint is
// taken after the step's effects are in the weights.
func (p *Progress) settle() {
	for _, tr := range []*Tracker{&p.TrainBatch, &p.ValBatch, &p.TestBatch, &p.PredictBatch} {
		tr.Total.settle()
		tr.Current.settle()
	}
}

func (c *Counter) settle() {
	c.Ready, c.Started, c.Completed = c.Processed, c.Processed, c.Processed
}
