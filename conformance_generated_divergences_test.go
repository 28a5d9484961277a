package volt_test

import (
	"fmt"
	"slices"
	"strings"
)

// divergenceClass is one kind of designed difference between volt and
// Lightning that the generated scenarios show: Guide is text of the
// docs/from-lightning.md line that tells users (the test checks it is there).
type divergenceClass struct {
	ID     string
	Reason string
	Guide  string
}

// designedRefusals are configurations volt refuses where Lightning runs:
// a scenario they apply to must fail in NewTrainer, and is not compared.
var designedRefusals = []struct {
	class   divergenceClass
	applies func(genSpec) bool
}{
	{divergenceClass{ID: "min-above-max", Reason: "MinEpochs > MaxEpochs or MinSteps > MaxSteps is an error in volt; Lightning lets the maximum win",
		Guide: "larger than `MaxEpochs` (or `MinSteps` larger than `MaxSteps`) is refused by `NewTrainer`"},
		func(sp genSpec) bool {
			arg := func(k string) float64 { f, _ := anyFloat(sp.Trainer, k); return f }
			maxEpochs := arg("max_epochs")
			if _, ok := sp.Trainer["max_epochs"]; !ok {
				maxEpochs = 2 // gen_scenarios.py's default
			}
			return arg("min_epochs") > maxEpochs || (arg("max_steps") > 0 && arg("min_steps") > arg("max_steps"))
		}},
}

// designedScenarios are designed differences that change a whole run (every
// value after the first difference), so a scenario they apply to is not
// compared; each has its guide line.
var designedScenarios = []struct {
	class   divergenceClass
	aspects []string // the aspects it changes; nil: all
	applies func(*generatedTrace) bool
}{
	{divergenceClass{ID: "two-optimizers-lightning-refuses", Reason: "two optimizers with frequencies in automatic optimization run in volt, each for its Frequency consecutive batches (Lightning 1.x); Lightning 2.x refuses them",
		Guide: "Lightning 2.x refuses several optimizers in automatic optimization"}, nil,
		func(tr *generatedTrace) bool {
			return tr.Spec.Model.TwoOptimizers != nil && tr.Error != nil && strings.Contains(*tr.Error, "multiple optimizers is only supported with manual optimization")
		}},
	{divergenceClass{ID: "overfit-validates-on-train", Reason: "OverfitBatches validates on the training batches; Lightning 2.x on the validation loaders",
		Guide: "trains and validates on the same first training batches"}, nil,
		func(tr *generatedTrace) bool { _, ok := tr.Spec.Trainer["overfit_batches"]; return ok }},
	{divergenceClass{ID: "validation-waits-for-window", Reason: "a validation due inside an accumulation window waits for its end; Lightning validates mid-window",
		Guide: "a validation due inside an accumulation window waits for"}, nil,
		func(tr *generatedTrace) bool { return validationInsideWindow(tr.Spec) }},
	{divergenceClass{ID: "stop-in-validate-stays-there", Reason: "a stop requested in a Validate ends there; Lightning's should_stop carries into the next fit, which trains nothing",
		Guide: "starts with no stop request"}, nil,
		func(tr *generatedTrace) bool {
			sp := tr.Spec
			a := sp.Model.Stop
			return a != nil && strings.HasPrefix(a.Hook, "on_validation") && a.Epoch == 0 &&
				len(sp.Stages) > 1 && sp.Stages[0] == "validate" && sp.Stages[1] == "fit"
		}},
	{divergenceClass{ID: "step-save-after-its-validation", Reason: "a step-triggered save with a monitor waits for the validation after its batch (Lightning 2.5.5); 2.2.5 saves first",
		Guide: "behave as in Lightning 2.5.5 (its PR #21106"}, []string{"hooks", "checkpoints"},
		func(tr *generatedTrace) bool { return deferredStepSave(tr.Spec) }},
	{divergenceClass{ID: "step-save-after-its-validation-resumed", Reason: "the same, in a run resumed from such a save: it resumes from another point than Lightning's",
		Guide: "behave as in Lightning 2.5.5 (its PR #21106"}, nil,
		func(tr *generatedTrace) bool {
			return deferredStepSave(tr.Spec) && slices.Contains(tr.Spec.Stages, "resume")
		}},
	{divergenceClass{ID: "step-save-after-its-validation-failed", Reason: "the same, where the save fails (a monitored value not logged): volt fails after that validation, Lightning before it",
		Guide: "behave as in Lightning 2.5.5 (its PR #21106"}, nil,
		func(tr *generatedTrace) bool {
			return deferredStepSave(tr.Spec) && tr.Error != nil && !strings.Contains(*tr.Error, "planned failure")
		}},
	{divergenceClass{ID: "resume-from-a-file-lightning-lacks", Reason: "volt's resumed Fit loads the last.ckpt it saved at the end of training (designed); Lightning's had no last.ckpt and trained from scratch",
		Guide: "volt also brings `last.ckpt` up to the end of training"}, nil,
		func(tr *generatedTrace) bool {
			run := resumedRun(tr)
			return tr.Spec.ResumeFrom == "last" && run != nil && !slices.ContainsFunc(run, func(e traceEvent) bool { return e.Hook == "on_load_checkpoint" })
		}},
	{divergenceClass{ID: "resume-after-its-batch", Reason: "resumed from a checkpoint saved in OnTrainBatchEnd, volt goes on with the next batch; Lightning 2.2.5 trains that batch again",
		Guide: "Lightning 2.2.5 trains that batch again"}, nil, lightningReplaysBatch},
	{divergenceClass{ID: "stop-waits-for-window", Reason: "a stop asked inside an accumulation window ends training at the window's end; Lightning stops mid-window",
		Guide: "ends training at the window's end; Lightning stops mid-window"}, nil, stopInsideWindow},
	{divergenceClass{ID: "resume-keeps-callback-metrics", Reason: "a monitor of the resumed Fit reads a value volt restored; Lightning's resumed run has none and fails (EarlyStopping strict)",
		Guide: "A resumed `Fit` starts with the checkpoint's callback metrics"}, nil,
		func(tr *generatedTrace) bool {
			return slices.Contains(tr.Spec.Stages, "resume") && tr.Error != nil && strings.Contains(*tr.Error, "conditioned on metric")
		}},
	{divergenceClass{ID: "stop-carries-into-next-fit", Reason: "a Fit after one that stopped starts with no stop request and trains; Lightning's should_stop carries into it, which trains nothing",
		Guide: "a second `fit` on that trainer trains nothing"}, nil, lightningSkipsLaterFit},
	{divergenceClass{ID: "no-negative-step", Reason: "an epoch that took no optimizer step sends its epoch row at step 0; Lightning 2.2.5 at step -1",
		Guide: "at step 0; Lightning 2.2.5 writes it at step -1"}, []string{"logged"},
		func(tr *generatedTrace) bool {
			return slices.ContainsFunc(tr.Logged, func(r loggedRow) bool { return r.Step < 0 })
		}},
	{divergenceClass{ID: "manual-steps-schedulers", Reason: "in manual optimization volt steps the schedulers at their interval; Lightning leaves them to the module",
		Guide: "Lightning leaves the schedulers to the module, volt steps them by the same rule"}, nil,
		func(tr *generatedTrace) bool { return tr.Spec.Model.Manual && tr.Spec.Model.Scheduler != nil }},
	{divergenceClass{ID: "loaders-checked-first", Reason: "Fit checks its loaders (a limit that leaves no batch) before ConfigureOptimizers and OnFitStart; Lightning after them, in its fit loop",
		Guide: "before `ConfigureOptimizers` and `OnFitStart`, so a bad loader fails"}, []string{"hooks"},
		func(tr *generatedTrace) bool { return tr.Error != nil && limitLeavesNoBatch(tr.Spec) }},
	{divergenceClass{ID: "step-fails-when-traced", Reason: "a step that fails while volt builds it (a refused Log) ends the run before the hooks of its first batch; Lightning fails in that batch",
		Guide: "ends the run when volt builds it"}, []string{"hooks", "lr"}, stepLogRefused},
	{divergenceClass{ID: "resume-after-its-epoch-end", Reason: "resumed from a checkpoint saved in OnTrainEpochEnd of an epoch that ran no validation, volt starts the next epoch; Lightning 2.2.5 goes back into that epoch and trains one more batch",
		Guide: "goes back into that epoch and trains one more batch"}, nil, lightningReentersEndedEpoch},
	{divergenceClass{ID: "resume-mid-epoch-data", Reason: "resumed inside an epoch, volt goes on with the loader's next unseen batch; Lightning 2.2.5 restarts the loader from its first batch (it warns that such a resume 'can cause unreliable results')",
		Guide: "restarts a plain loader from its first batch"}, nil, lightningResumesMidEpoch},
	{divergenceClass{ID: "resume-after-its-validation", Reason: "resumed from a checkpoint saved during a validation, volt goes on after it; Lightning skips the sanity check and runs that validation again",
		Guide: "goes on after that validation"}, nil, lightningRepeatsValidation},
	{divergenceClass{ID: "resumed-at-its-end", Reason: "a resumed Fit with nothing left to train ends with the counters of the run it resumes; Lightning reports the epoch its checkpoint was saved in",
		Guide: "ends with the counters of the run it resumes"}, []string{"final"}, lightningSkippedResumedTraining},
	{divergenceClass{ID: "resume-restarts-the-sampler", Reason: "a run resumed from a checkpoint reads the seeded RandomSampler's permutations the uninterrupted run read; Lightning's restarted process starts the sampler's generator again",
		Guide: "where Lightning's restarted process starts the sampler's generator again"}, nil,
		func(tr *generatedTrace) bool {
			return tr.Spec.ShuffleSeed != nil && slices.Contains(tr.Spec.Stages, "resume")
		}},
	{divergenceClass{ID: "resume-finishes-its-epoch", Reason: "a Fit resumed inside an epoch where MaxSteps was reached finishes that epoch (validation, epoch end); Lightning returns at once",
		Guide: "also when `MaxSteps` was reached there"}, nil,
		func(tr *generatedTrace) bool {
			_, maxSteps := tr.Spec.Trainer["max_steps"]
			return maxSteps && lightningSkippedResumedTraining(tr)
		}},
}

// limitLeavesNoBatch reports whether the spec's fractional
// limit_train_batches or limit_val_batches leaves no batch of a loader
// (Lightning: "Please increase the `limit_…_batches`", volt: a refused
// LimitTrainBatches or LimitValBatches).
func limitLeavesNoBatch(sp genSpec) bool {
	none := func(key string, batches int) bool {
		v, ok := sp.Trainer[key]
		if !ok {
			return false
		}
		f, isInt, err := number(v)
		return err == nil && !isInt && f > 0 && int(float64(batches)*f) == 0
	}
	if none("limit_train_batches", sp.trainBatches()) {
		return true
	}
	for _, b := range sp.valBatches() {
		if none("limit_val_batches", b) {
			return true
		}
	}
	return false
}

// stepLogRefused reports whether Lightning's run failed on a value logged in
// a step with on_step=False and on_epoch=False, which volt refuses when it
// builds the step.
func stepLogRefused(tr *generatedTrace) bool {
	if tr.Error == nil || !strings.Contains(*tr.Error, "on_epoch=False)` is not useful") {
		return false
	}
	return slices.ContainsFunc(tr.Spec.Model.Logs, func(g genLog) bool {
		onStep, onEpoch := g.resolved()
		return strings.HasSuffix(g.Hook, "_step") && !onStep && !onEpoch
	})
}

func deferredStepSave(sp genSpec) bool {
	mc := sp.Callbacks.Checkpoint
	return mc != nil && anyInt(mc, "every_n_train_steps") > 0 && anyString(mc, "monitor") != ""
}

// resumedRun returns Lightning's events of the resumed Fit (nil if none).
func resumedRun(tr *generatedTrace) []traceEvent {
	stage := slices.Index(tr.Spec.Stages, "resume")
	b := runBounds(tr.Events)
	if stage < 0 || stage >= len(b) {
		return nil
	}
	return tr.Events[b[stage]:]
}

// resumedSave is the index in Lightning's events of the save its resumed
// Fit loaded (-1: none).
func resumedSave(tr *generatedTrace) int {
	if tr.ResumedFrom == nil {
		return -1
	}
	return tr.ResumedFrom.Event
}

// lightningResumesMidEpoch reports whether Lightning's resumed Fit goes on
// inside an epoch: its first training batch is not the epoch's first.
func lightningResumesMidEpoch(tr *generatedTrace) bool {
	run := resumedRun(tr)
	if tr.ResumedFrom == nil || run == nil {
		return false
	}
	first := slices.IndexFunc(run, func(e traceEvent) bool { return e.Who == "Callback" && e.Hook == "on_train_batch_start" })
	return first >= 0 && run[first].BatchIdx != nil && *run[first].BatchIdx > 0
}

// lightningRepeatsValidation reports whether Lightning's resumed Fit runs a
// validation before its first training batch (it resumed from a
// checkpoint saved inside that validation).
func lightningRepeatsValidation(tr *generatedTrace) bool {
	started := false
	for _, e := range resumedRun(tr) {
		switch {
		case e.Hook == "on_train_start":
			started = true
		case started && e.Hook == "on_train_batch_start":
			return false
		case started && e.Hook == "on_validation_start":
			return true
		}
	}
	return false
}

// lightningReplaysBatch reports whether Lightning's resumed Fit starts with
// a training batch that its first run had already trained and checkpointed
// in on_train_batch_end (the save it resumed from came after that batch's
// start and before the next one).
func lightningReplaysBatch(tr *generatedTrace) bool {
	run := resumedRun(tr)
	if run == nil {
		return false
	}
	first := slices.IndexFunc(run, func(e traceEvent) bool { return e.Who == "Callback" && e.Hook == "on_train_batch_start" })
	if first < 0 {
		return false
	}
	b := runBounds(tr.Events)
	before := tr.Events[:b[slices.Index(tr.Spec.Stages, "resume")]]
	lastSave := resumedSave(tr)
	for i, e := range before {
		if e.Who == "Callback" && e.Hook == "on_train_batch_start" && e.Epoch == run[first].Epoch &&
			e.BatchIdx != nil && run[first].BatchIdx != nil && *e.BatchIdx == *run[first].BatchIdx {
			next := slices.IndexFunc(before[i+1:], func(x traceEvent) bool { return x.Who == "Callback" && x.Hook == "on_train_batch_start" })
			return lastSave > i && (next < 0 || lastSave < i+1+next)
		}
	}
	return false
}

// lightningSkipsLaterFit reports whether the spec fits more than once on
// one Trainer and Lightning's last fit trained nothing (no on_train_start)
// with should_stop still set from an earlier run.
func lightningSkipsLaterFit(tr *generatedTrace) bool {
	fits := 0
	for _, st := range tr.Spec.Stages {
		if st == "fit" {
			fits++
		}
	}
	b := runBounds(tr.Events)
	if fits < 2 || len(b) == 0 || tr.Final == nil || !tr.Final.ShouldStop {
		return false
	}
	last := tr.Events[b[len(b)-1]:]
	return !slices.ContainsFunc(last, func(e traceEvent) bool { return e.Hook == "on_train_start" })
}

// lightningReentersEndedEpoch reports whether Lightning's resumed Fit trains
// its first batch in an epoch whose on_train_epoch_end its first run had
// reached: resumed from a checkpoint saved there, its restarted epoch loop
// waits for a validation that never runs (_is_validation_done) and trains a
// batch past the epoch's end.
func lightningReentersEndedEpoch(tr *generatedTrace) bool {
	run := resumedRun(tr)
	first := slices.IndexFunc(run, func(e traceEvent) bool { return e.Who == "Callback" && e.Hook == "on_train_batch_start" })
	if first < 0 {
		return false
	}
	before := tr.Events[:len(tr.Events)-len(run)]
	end := slices.IndexFunc(before, func(e traceEvent) bool {
		return e.Who == "Callback" && e.Hook == "on_train_epoch_end" && e.Epoch == run[first].Epoch
	})
	lastSave := resumedSave(tr)
	return end >= 0 && lastSave > end && !lightningRepeatsValidation(tr)
}

// stopInsideWindow reports whether the spec asks for a stop in
// on_train_batch_end after a batch that does not end an accumulation window.
func stopInsideWindow(tr *generatedTrace) bool {
	sp := tr.Spec
	a := sp.Model.Stop
	if a == nil || a.Hook != "on_train_batch_end" || a.Batch == nil {
		return false
	}
	k := 1
	if f, ok := anyFloat(sp.Trainer, "accumulate_grad_batches"); ok {
		k = int(f)
	}
	for e, f := range sp.Callbacks.AccumulationScheduler {
		var epoch int
		fmt.Sscan(e, &epoch)
		if epoch <= a.Epoch {
			k = max(k, f)
		}
	}
	return k > 1 && (*a.Batch+1)%k != 0
}

// lightningSkippedResumedTraining reports whether Lightning's resumed Fit
// had nothing to train (no on_train_start).
func lightningSkippedResumedTraining(tr *generatedTrace) bool {
	run := resumedRun(tr)
	return run != nil && !slices.ContainsFunc(run, func(e traceEvent) bool { return e.Hook == "on_train_start" })
}

// validationInsideWindow reports whether a validation of the spec's Fit is
// due after a batch that does not end an accumulation window (a sufficient
// rule: it counts validations by batch cadence, ignoring stops).
func validationInsideWindow(sp genSpec) bool {
	arg := func(k string) (float64, bool, bool) {
		v, ok := sp.Trainer[k]
		if !ok || v == nil {
			return 0, false, ok
		}
		f, isInt, _ := number(v)
		return f, isInt, true
	}
	batches := sp.trainBatches()
	if f, isInt, ok := arg("limit_train_batches"); ok {
		if isInt {
			batches = min(batches, int(f))
		} else {
			batches = int(float64(batches) * f)
		}
	}
	accumulate := map[int]int{}
	if k, _, ok := arg("accumulate_grad_batches"); ok {
		accumulate[0] = int(k)
	}
	for e, k := range sp.Callbacks.AccumulationScheduler {
		var epoch int
		fmt.Sscan(e, &epoch)
		accumulate[epoch] = k
	}
	if len(accumulate) == 0 || batches <= 0 {
		return false
	}
	vci, vciInt, hasVCI := arg("val_check_interval")
	_, across := sp.Trainer["check_val_every_n_epoch"]
	across = across && sp.Trainer["check_val_every_n_epoch"] == nil
	every := batches
	if hasVCI {
		if vciInt {
			every = int(vci)
		} else {
			every = max(1, int(float64(batches)*vci))
		}
	}
	maxEpochs := 2
	if f, _, ok := arg("max_epochs"); ok {
		maxEpochs = int(f)
	}
	k, seen := 1, 0
	for epoch := range max(maxEpochs, sp.ResumeMaxEpochs) {
		if f, ok := accumulate[epoch]; ok {
			k = f
		}
		for b := range batches {
			seen++
			count := b + 1
			if across {
				count = seen
			}
			last := b == batches-1
			if count%every == 0 && !last && (b+1)%k != 0 {
				return true
			}
		}
	}
	return false
}
