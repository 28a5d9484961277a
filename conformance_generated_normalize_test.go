package volt_test

import (
	"regexp"
	"slices"
	"strings"
)

// The designed differences the generated scenarios show in every run where
// they apply. Each is removed from both traces before comparing, by a
// function that changes only what its guide line (docs/from-lightning.md,
// checked by TestConformanceGenerated) says volt does differently, so that
// the rest of the run is still compared.
var designedNormalizations = []struct {
	class     divergenceClass
	normalize func(sp genSpec, want, got []traceEvent) (w, g []traceEvent)
}{
	{divergenceClass{ID: "last-keeps-its-name", Reason: "SaveLast always writes last.ckpt; Lightning writes last-v1.ckpt where its directory holds a last.ckpt its restored state does not name",
		Guide: "Lightning writes `last-v1.ckpt` instead"}, lastKeepsItsName},
	{divergenceClass{ID: "teardown-after-failure", Reason: "after a failure volt calls OnException, then Teardown; Lightning 2.2.5 only on_exception",
		Guide: "After a failure volt calls `OnException` and then `Teardown`"}, dropTeardownAfterException},
	{divergenceClass{ID: "last-is-a-copy", Reason: "volt's last.ckpt is a copy of the file just saved; Lightning saves the state again (on_save_checkpoint twice)",
		Guide: "copies the file it has just written to `last.ckpt`"}, dropSecondSaveOfLast},
	{divergenceClass{ID: "resume-counters-first", Reason: "a resumed Fit restores the counters before any hook; Lightning reports epoch 0 and step 0 until its loops restore theirs",
		Guide: "restores the epoch and step counters before the first hook"}, forgetCountersBeforeResumedTraining},
	{divergenceClass{ID: "last-at-train-end", Reason: "with SaveLast volt brings last.ckpt up to the end of training; Lightning leaves it at the last cadence's save",
		Guide: "volt also brings `last.ckpt` up to the end of training"}, dropLastSavedAtTrainEnd},
	{divergenceClass{ID: "resume-keeps-callback-metrics", Reason: "a resumed Fit starts with the checkpoint's callback metrics; Lightning's with none",
		Guide: "A resumed `Fit` starts with the checkpoint's callback metrics"}, dropRestoredMetrics},
	{divergenceClass{ID: "last-only-with-a-save", Reason: "SaveLast rewrites last.ckpt only with a due save; Lightning also at every epoch or validation end",
		Guide: "`SaveLast` rewrites `last.ckpt` only with a save"}, dropLastWithoutSave},
	{divergenceClass{ID: "every-file-kept", Reason: "with SaveTopK -1 and no monitor a repeated file name gets -v1, -v2 (every save kept); Lightning overwrites its previous file",
		Guide: "gets `-v1`, `-v2`, … so that every save is kept"}, versionedNames},
	{divergenceClass{ID: "slash-in-file-name", Reason: "a / in a metric name becomes _ in a checkpoint file name; Lightning makes a folder",
		Guide: "a `/` in a metric name becomes `_` in the file name"}, slashInFileName},
}

// runBounds returns the start index of each run (a run starts at the
// recording callback's setup).
func runBounds(events []traceEvent) []int {
	var starts []int
	for i, e := range events {
		if i == 0 || (e.Who == "Callback" && e.Hook == "setup") {
			starts = append(starts, i)
		}
	}
	return starts
}

func dropTeardownAfterException(_ genSpec, want, got []traceEvent) ([]traceEvent, []traceEvent) {
	var out []traceEvent
	failed := false
	for _, e := range got {
		if e.Who == "Callback" && e.Hook == "setup" {
			failed = false
		}
		if e.Hook == "on_exception" {
			failed = true
		}
		if failed && e.Hook == "teardown" {
			continue
		}
		out = append(out, e)
	}
	return want, out
}

// dropSecondSaveOfLast drops, in Lightning's trace, the state hooks of a
// last.ckpt save that follows another save in the same hook.
func dropSecondSaveOfLast(_ genSpec, want, got []traceEvent) ([]traceEvent, []traceEvent) {
	return dropSaves(want, true, func(i int) bool { return want[i].File == "last.ckpt" && afterAnotherSave(want, i) }), got
}

// afterAnotherSave reports whether the save events[i] comes right after
// another save and its state hooks (on_save_checkpoint).
func afterAnotherSave(events []traceEvent, i int) bool {
	j := i - 1
	for j >= 0 && events[j].Hook == "on_save_checkpoint" {
		j--
	}
	return j >= 0 && events[j].Who == "ModelCheckpoint"
}

// dropSaves drops the ModelCheckpoint saves of events that drop selects (by
// index) with the state hooks right after each, or only those hooks with
// keepSave.
func dropSaves(events []traceEvent, keepSave bool, drop func(i int) bool) []traceEvent {
	var out []traceEvent
	dropping := false
	for i, e := range events {
		if e.Who == "ModelCheckpoint" {
			dropping = drop(i)
			if dropping && !keepSave {
				continue
			}
		} else if e.Hook != "on_save_checkpoint" {
			dropping = false
		}
		if dropping && e.Hook == "on_save_checkpoint" {
			continue
		}
		out = append(out, e)
	}
	return out
}

// forgetCountersBeforeResumedTraining zeroes the counters of both traces'
// events in a resumed Fit before its on_train_start.
func forgetCountersBeforeResumedTraining(sp genSpec, want, got []traceEvent) ([]traceEvent, []traceEvent) {
	stage := slices.Index(sp.Stages, "resume")
	if stage < 0 {
		return want, got
	}
	zero := func(events []traceEvent) []traceEvent {
		events = slices.Clone(events)
		b := runBounds(events)
		if stage >= len(b) {
			return events
		}
		for i := b[stage]; i < len(events) && events[i].Hook != "on_train_start"; i++ {
			events[i].Epoch, events[i].GlobalStep = 0, 0
		}
		return events
	}
	return zero(want), zero(got)
}

func slashInFileName(_ genSpec, want, got []traceEvent) ([]traceEvent, []traceEvent) {
	want = slices.Clone(want)
	for i := range want {
		want[i].File = strings.ReplaceAll(want[i].File, "/", "_")
	}
	return want, got
}

// dropLastSavedAtTrainEnd drops volt's save of last.ckpt in OnTrainEnd (after
// the recording callback's on_train_end) with the state hooks it ran.
func dropLastSavedAtTrainEnd(_ genSpec, want, got []traceEvent) ([]traceEvent, []traceEvent) {
	trainEnded := make([]bool, len(got))
	ended := false
	for i, e := range got {
		switch {
		case e.Who == "Callback" && e.Hook == "setup":
			ended = false
		case e.Who == "Callback" && e.Hook == "on_train_end":
			ended = true
		}
		trainEnded[i] = ended
	}
	return want, dropSaves(got, false, func(i int) bool { return trainEnded[i] && got[i].File == "last.ckpt" })
}

// dropRestoredMetrics drops, from volt's monitor records in a resumed Fit,
// the values Lightning's do not hold (those volt restored): the values both
// hold are still compared.
func dropRestoredMetrics(sp genSpec, want, got []traceEvent) ([]traceEvent, []traceEvent) {
	stage := slices.Index(sp.Stages, "resume")
	if stage < 0 {
		return want, got
	}
	wb, gb := runBounds(want), runBounds(got)
	if stage >= len(wb) || stage >= len(gb) {
		return want, got
	}
	var wm []traceEvent
	for _, e := range want[wb[stage]:] {
		if e.Who == "Monitor" {
			wm = append(wm, e)
		}
	}
	got = slices.Clone(got)
	k := 0
	for i := gb[stage]; i < len(got) && k < len(wm); i++ {
		if got[i].Who != "Monitor" {
			continue
		}
		kept := map[string]float64{}
		for name, v := range got[i].Metrics {
			if _, ok := wm[k].Metrics[name]; ok {
				kept[name] = v
			}
		}
		got[i].Metrics = kept
		k++
	}
	return want, got
}

// dropLastWithoutSave drops, from Lightning's trace, a save of last.ckpt on
// its own (no top-k file saved in the same hook) with its state hooks, when
// volt saved no last.ckpt at that epoch and step.
func dropLastWithoutSave(_ genSpec, want, got []traceEvent) ([]traceEvent, []traceEvent) {
	type at struct {
		epoch int
		step  int64
	}
	voltLast := map[at]bool{}
	for _, e := range got {
		if e.Who == "ModelCheckpoint" && e.File == "last.ckpt" {
			voltLast[at{e.Epoch, e.GlobalStep}] = true
		}
	}
	return dropSaves(want, false, func(i int) bool {
		e := want[i]
		return e.File == "last.ckpt" && !afterAnotherSave(want, i) && !voltLast[at{e.Epoch, e.GlobalStep}]
	}), got
}

var lastVersioned = regexp.MustCompile(`^last-v[0-9]+\.ckpt$`)

// lastKeepsItsName names Lightning's last-vN.ckpt last.ckpt.
func lastKeepsItsName(_ genSpec, want, got []traceEvent) ([]traceEvent, []traceEvent) {
	if !slices.ContainsFunc(want, func(e traceEvent) bool { return lastVersioned.MatchString(e.File) }) {
		return want, got
	}
	want = slices.Clone(want)
	for i := range want {
		want[i].File = lastVersioned.ReplaceAllString(want[i].File, "last.ckpt")
	}
	return want, got
}

var versionSuffix = regexp.MustCompile(`-v[0-9]+\.ckpt$`)

// versionedNames drops the -vN from the checkpoint names where the spec
// keeps every file without a monitor (volt versions a repeated name,
// Lightning reuses it, unless an earlier process wrote it).
func versionedNames(sp genSpec, want, got []traceEvent) ([]traceEvent, []traceEvent) {
	mc := sp.Callbacks.Checkpoint
	if mc == nil || anyString(mc, "monitor") != "" || anyInt(mc, "save_top_k") != -1 {
		return want, got
	}
	strip := func(events []traceEvent) []traceEvent {
		events = slices.Clone(events)
		for i := range events {
			events[i].File = versionSuffix.ReplaceAllString(events[i].File, ".ckpt")
		}
		return events
	}
	// Both: a restarted process versions a name an earlier process wrote in
	// Lightning too.
	return strip(want), strip(got)
}
