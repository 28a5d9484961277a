package volt

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// checkState checks a checkpoint's trainer state before a run uses it:
// for a Fit, the parts it cannot resume without are an error; anything this
// version of volt cannot vouch for (a newer volt_version, parts it does not
// know) is said once, through the trainer's logger.
func (t *Trainer) checkState(path, voltVersion string, doc *stateDoc, fn Stage) error {
	var st checkedState
	if err := doc.decode(&st); err != nil {
		return err
	}
	parts := doc.members
	if err := t.checkVoltVersion(path, voltVersion); err != nil {
		return err
	}
	if unknown := t.unknownStateParts(parts); len(unknown) > 0 {
		t.warnOnce("unknown-state-"+path, "volt: the checkpoint's trainer state has parts this volt does not know; they are ignored",
			"checkpoint", path, "parts", unknown, "written_by", voltVersion, "this_volt", Version)
	}
	if fn != StageFit || st.WeightsOnly {
		return nil
	}
	if _, ok := parts["progress"]; !ok {
		return fmt.Errorf("checkpoint %s: the trainer state has no \"progress\" (the loops' counters), so Fit cannot tell where to resume; "+
			"a full checkpoint from Trainer.SaveCheckpoint has it (load this one's weights with Validate, Test or Predict, or start a new Fit from them with volt.LoadModule)", path)
	}
	if v := st.Progress.Version; v != ProgressVersion {
		newer := ""
		if v > ProgressVersion {
			newer = " (a newer volt's)"
		}
		return fmt.Errorf("checkpoint %s: \"progress\" has version %d%s; this volt (%s) reads version %d only", path, v, newer, Version, ProgressVersion)
	}
	return t.checkResumeParts(path, parts, &st)
}

// checkedState is what checkState reads of a trainer state.
type checkedState struct {
	WeightsOnly      bool         `json:"weights_only"`
	Progress         Progress     `json:"progress"`
	Resume           *resumePoint `json:"resume"`
	Accumulate       int          `json:"accumulate_grad_batches"`
	ConfigAccumulate int          `json:"config_accumulate_grad_batches"`
}

// resumeParts are the parts of a trainer state, besides "progress", that
// every full checkpoint volt writes holds and a Fit resumes from, with what
// each is.
var resumeParts = []struct{ key, what string }{
	{"seed", "the run's seed, which the loaders' shuffling and dropout continue from"},
	{"accumulate_grad_batches", "the batches per optimizer step the run was accumulating"},
	{"resume", "where in its epoch the run resumes: the next batch, whether its validation ran"},
}

// checkResumeParts refuses a trainer state that a run cannot have left: a
// part Fit resumes from missing, or a value no run has (an accumulation
// below 1, a negative resume point), naming the part and what is valid. An
// accumulation the saved run's Config did not set is said once.
func (t *Trainer) checkResumeParts(path string, parts map[string]json.RawMessage, st *checkedState) error {
	for _, p := range resumeParts {
		if _, ok := parts[p.key]; !ok {
			return fmt.Errorf("checkpoint %s: the trainer state has no %q (%s), which every full checkpoint volt writes holds; Fit cannot resume without it "+
				"(load this one's weights with Validate, Test or Predict, or start a new Fit from them with volt.LoadModule)", path, p.key, p.what)
		}
	}
	if st.Accumulate < 1 {
		return fmt.Errorf("checkpoint %s: the trainer state's \"accumulate_grad_batches\" is %d; a run accumulates 1 or more batches per optimizer step", path, st.Accumulate)
	}
	if st.ConfigAccumulate < 0 {
		return fmt.Errorf("checkpoint %s: the trainer state's \"config_accumulate_grad_batches\" is %d; Config.AccumulateGradBatches is 1 or more (0 means 1)", path, st.ConfigAccumulate)
	}
	if r := st.Resume; r == nil {
		return fmt.Errorf("checkpoint %s: the trainer state's \"resume\" is null; it says where the run resumes", path)
	} else if r.Batch < 0 {
		return fmt.Errorf("checkpoint %s: the trainer state's \"resume\" has batch %d; it counts the batches of its epoch done, 0 or more", path, r.Batch)
	} else if r.Epoch < 0 {
		return fmt.Errorf("checkpoint %s: the trainer state's \"resume\" has epoch %d; epochs count from 0", path, r.Epoch)
	}
	if c := st.ConfigAccumulate; c != 0 && st.Accumulate != c {
		t.warnOnce("accumulate-changed-"+path, fmt.Sprintf("volt: the checkpoint's run accumulated %d batches per optimizer step, its Config.AccumulateGradBatches was %d "+
			"(set by Trainer.SetAccumulateGradBatches or a callback.GradientAccumulationScheduler); the resumed run goes on accumulating %d until such a call changes it",
			st.Accumulate, c, st.Accumulate), "checkpoint", path)
	}
	return nil
}

// checkVoltVersion refuses a checkpoint whose volt_version is no version
// (volt writes MAJOR.MINOR.PATCH), and says once when it was written by a
// volt newer than this one, or does not say which volt wrote it.
func (t *Trainer) checkVoltVersion(path, written string) error {
	switch cmp, ok := compareVersions(written, Version); {
	case written == "":
		t.warnOnce("volt-version-"+path, "volt: the checkpoint does not say which volt wrote it (no volt_version); it is read as this version's",
			"checkpoint", path, "this_volt", Version)
	case !ok:
		return badVoltVersion(path, written)
	case cmp > 0:
		t.warnOnce("volt-version-"+path, "volt: the checkpoint was written by a newer volt; what this version does not know of it is ignored",
			"checkpoint", path, "volt_version", written, "this_volt", Version)
	}
	return nil
}

// badVoltVersion is the error for a volt_version that is no version, or
// nil for one that is (or none: another writer's file).
func badVoltVersion(path, written string) error {
	if _, ok := parseVersion(written); ok || written == "" {
		return nil
	}
	return fmt.Errorf("checkpoint %s: volt_version %q is not a version (MAJOR.MINOR.PATCH, as this volt writes %q); the file was edited or written by another program", path, written, Version)
}

// unknownStateParts returns the keys of parts this volt does not read
// (knownMembers), sorted.
func (t *Trainer) unknownStateParts(parts map[string]json.RawMessage) []string {
	known := t.knownMembers()
	var unknown []string
	for _, k := range slices.Sorted(maps.Keys(parts)) {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	return unknown
}

// compareVersions compares two semantic versions (MAJOR.MINOR.PATCH, with
// an optional -pre-release, which sorts before the release, and +build,
// which is ignored); ok is false when either is not one.
func compareVersions(a, b string) (cmp int, ok bool) {
	pa, okA := parseVersion(a)
	pb, okB := parseVersion(b)
	if !okA || !okB {
		return 0, false
	}
	for i := range 3 {
		if pa.nums[i] != pb.nums[i] {
			if pa.nums[i] < pb.nums[i] {
				return -1, true
			}
			return 1, true
		}
	}
	switch {
	case pa.pre == pb.pre:
		return 0, true
	case pa.pre == "":
		return 1, true
	case pb.pre == "":
		return -1, true
	}
	return strings.Compare(pa.pre, pb.pre), true
}

type version struct {
	nums [3]int
	pre  string
}

func parseVersion(s string) (version, bool) {
	var v version
	s, _, _ = strings.Cut(strings.TrimPrefix(s, "v"), "+")
	s, v.pre, _ = strings.Cut(s, "-")
	fields := strings.Split(s, ".")
	if len(fields) != 3 {
		return v, false
	}
	for i, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return v, false
		}
		v.nums[i] = n
	}
	return v, true
}
