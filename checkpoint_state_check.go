package volt

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// checkState checks a checkpoint's trainer state before a run uses it:
// for a Fit, the parts it cannot resume without are an error; anything this
// version of volt cannot vouch for (a newer volt_version, parts it does not
// know) is said once, through the trainer's logger.
func (t *Trainer) checkState(path, voltVersion string, state json.RawMessage, st *trainerState, fn Stage) error {
	var parts map[string]json.RawMessage
	if err := json.Unmarshal(state, &parts); err != nil {
		return fmt.Errorf("checkpoint %s: decoding the trainer state: %w", path, err)
	}
	t.checkVoltVersion(path, voltVersion)
	if unknown := unknownStateParts(parts); len(unknown) > 0 {
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
	return nil
}

// checkVoltVersion says once when the checkpoint was written by a volt newer
// than this one, or does not say which volt wrote it.
func (t *Trainer) checkVoltVersion(path, written string) {
	switch cmp, ok := compareVersions(written, Version); {
	case written == "":
		t.warnOnce("volt-version-"+path, "volt: the checkpoint does not say which volt wrote it (no volt_version); it is read as this version's",
			"checkpoint", path, "this_volt", Version)
	case !ok:
		t.warnOnce("volt-version-"+path, "volt: the checkpoint's volt_version is not a version number (MAJOR.MINOR.PATCH); it is read as this version's",
			"checkpoint", path, "volt_version", written, "this_volt", Version)
	case cmp > 0:
		t.warnOnce("volt-version-"+path, "volt: the checkpoint was written by a newer volt; what this version does not know of it is ignored",
			"checkpoint", path, "volt_version", written, "this_volt", Version)
	}
}

// knownStateParts are the top-level keys of a trainer state that this volt
// reads: trainerState's fields and the data-parallel ranks' accumulators.
var knownStateParts = func() map[string]bool {
	known := map[string]bool{"rank_metrics": true}
	ty := reflect.TypeFor[trainerState]()
	for i := range ty.NumField() {
		name, _, _ := strings.Cut(ty.Field(i).Tag.Get("json"), ",")
		known[name] = true
	}
	return known
}()

// unknownStateParts returns the keys of parts this volt does not read, sorted.
func unknownStateParts(parts map[string]json.RawMessage) []string {
	var unknown []string
	for _, k := range slices.Sorted(maps.Keys(parts)) {
		if !knownStateParts[k] {
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

// restoreCallbackStates gives the module and each Stateful callback its
// saved state. One with no state in the checkpoint starts fresh, and a saved
// state that none claims (by StateKey) is left unused; both are said once,
// naming the callback and the keys: adding or removing a callback when
// resuming is legitimate (Lightning allows both, warning of the second), but
// the user should know that its state did not carry over.
func (t *Trainer) restoreCallbackStates(path string, st *trainerState) error {
	claimed := map[string]bool{}
	for _, tg := range t.hooks.moduleFirst(hookStateful) {
		s := tg.value.(Stateful)
		key := s.StateKey()
		claimed[key] = true
		b, ok := st.Callbacks[key]
		if !ok {
			saved := slices.Sorted(maps.Keys(st.Callbacks))
			t.warnOnce("no-state-"+key+"-"+path, "volt: the checkpoint has no state for "+tg.name+"; it starts fresh",
				"state_key", key, "checkpoint", path, "saved_state_keys", saved)
			continue
		}
		if err := s.LoadState(b); err != nil {
			return fmt.Errorf("checkpoint %s: %s.LoadState: %w", path, tg.name, err)
		}
	}
	var unclaimed []string
	for _, key := range slices.Sorted(maps.Keys(st.Callbacks)) {
		if !claimed[key] {
			unclaimed = append(unclaimed, key)
		}
	}
	if len(unclaimed) > 0 {
		t.warnOnce("unclaimed-state-"+path, "volt: the checkpoint holds states of callbacks this run does not have; add them to Config.Callbacks to restore them",
			"state_keys", unclaimed, "checkpoint", path)
	}
	return nil
}
