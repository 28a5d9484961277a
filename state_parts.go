package volt

// This file is what a checkpoint holds of the trainer besides the module's
// variables: the parts with resumable state. A full checkpoint's trainer
// state is what every part saves; a Fit resumed from it gives every part
// its own back. Lightning's loops and components each own a
// state_dict/load_state_dict, which its checkpoint connector asks for; in
// volt each part is a statePart, listed in stateParts. Adding resumable
// state is writing one part and listing it there: snapshot and
// restoreState (checkpointing.go) are loops over the parts.

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/checkpoint"
)

// statePart is one part of the trainer with resumable state.
type statePart interface {
	// stateKey names the part: in errors, and as the member of the
	// trainer state that holds its state (a flatPart's are its members).
	stateKey() string
	// save adds the part's state to st, the trainer state of a full
	// checkpoint being taken.
	save(st *stateDoc) error
	// load takes the part's state back from st, the trainer state of the
	// checkpoint a Fit resumes from. A member the checkpoint lacks is
	// absent from st (a checkpoint of an older volt, or of a run without
	// the part).
	load(st *stateDoc) error
}

// flatPart is a part whose state predates the parts: it is spread over
// several members of the trainer state, the layout checkpoints have always
// had, which the part keeps so that every checkpoint stays readable.
type flatPart interface {
	statePart
	// members are the members of the trainer state the part owns.
	members() []string
}

// partMembers returns the members of the trainer state p owns.
func partMembers(p statePart) []string {
	if f, ok := p.(flatPart); ok {
		return f.members()
	}
	return []string{p.stateKey()}
}

// stateDoc is a checkpoint's trainer state as the parts write and read
// it: the members of a JSON object by name, and the tensors that parts keep
// beside the module's variables.
type stateDoc struct {
	// path is the checkpoint's file, for errors and what a load says ("" in
	// a save).
	path    string
	members map[string]json.RawMessage
	// tensors are the parts' tensors by name: those a save adds to the
	// file, or those a load found in it.
	tensors map[string]*tensors.Tensor
	// warnOnce and info say what a load goes on without, or changes: once
	// per key as a warning, or as information.
	warnOnce func(key, msg string, attrs ...any)
	info     func(msg string, attrs ...any)
}

// newStateDoc returns an empty trainer state.
func (t *Trainer) newStateDoc(path string) *stateDoc {
	return &stateDoc{path: path, members: map[string]json.RawMessage{}, tensors: map[string]*tensors.Tensor{},
		warnOnce: t.warnOnce, info: t.cfg.Log.Info}
}

// decodeStateDoc returns the trainer state of the checkpoint at path.
func (t *Trainer) decodeStateDoc(path string, state json.RawMessage) (*stateDoc, error) {
	st := t.newStateDoc(path)
	if err := json.Unmarshal(state, &st.members); err != nil {
		return nil, fmt.Errorf("checkpoint %s: decoding the trainer state: %w", path, err)
	}
	if st.members == nil { // "null"
		st.members = map[string]json.RawMessage{}
	}
	return st, nil
}

// put sets member to v.
func (st *stateDoc) put(member string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding the trainer state's %q: %w", member, err)
	}
	st.members[member] = b
	return nil
}

// putNonEmpty sets member to v, or leaves it out when v is empty (JSON's
// omitempty: false, 0, "", a nil pointer, an empty slice or map).
func (st *stateDoc) putNonEmpty(member string, v any) error {
	if isEmpty(reflect.ValueOf(v)) {
		delete(st.members, member)
		return nil
	}
	return st.put(member, v)
}

// isEmpty reports whether encoding/json's omitempty leaves v out.
func isEmpty(v reflect.Value) bool {
	if !v.IsValid() {
		return true
	}
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	case reflect.Struct:
		return false
	}
	return v.IsZero()
}

// get decodes member into v, reporting whether the state has it.
func (st *stateDoc) get(member string, v any) (bool, error) {
	b, ok := st.members[member]
	if !ok {
		return false, nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return true, fmt.Errorf("checkpoint %s: decoding the trainer state's %q: %w", st.path, member, err)
	}
	return true, nil
}

// decode decodes the whole state into v (a struct of the members it
// reads).
func (st *stateDoc) decode(v any) error {
	b, err := st.encode()
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("checkpoint %s: decoding the trainer state: %w", st.path, err)
	}
	return nil
}

// encode returns the state as a JSON object.
func (st *stateDoc) encode() (json.RawMessage, error) {
	b, err := json.Marshal(st.members)
	if err != nil {
		return nil, fmt.Errorf("encoding the trainer state: %w", err)
	}
	return b, nil
}

// addTensors appends the parts' tensors to f, by name.
func (st *stateDoc) addTensors(f *checkpoint.File) error {
	for _, name := range slices.Sorted(maps.Keys(st.tensors)) {
		ct, err := checkpoint.FromGoMLX(name, st.tensors[name])
		if err != nil {
			return err
		}
		f.Tensors = append(f.Tensors, ct)
	}
	return nil
}

// stateParts returns the parts of the trainer with resumable state, in the
// order they save and load, and the members of the trainer state each owns:
//
//	settings (settings_part.go)      seed, accumulate_grad_batches, config_accumulate_grad_batches
//	fit loop (fit_resume.go)         progress, resume (with the stream position)
//	logging (logging_part.go)        train_metrics, callback_metrics, logged_metrics,
//	                                 progress_bar_metrics; tensors /volt/metric_state/…
//	callbacks (callback_state.go)    callbacks
//	datamodule (callback_state.go)   datamodule
//	schedulers (scheduling.go)       schedulers, schedulers_ahead
//	loss_scaler (precision.go)       loss_scaler
//	logs (logger_resume.go)          logs
//
// The loggers' part is last: saving it flushes them, after every other part
// has run the code it runs.
func (t *Trainer) stateParts() []statePart {
	parts := []statePart{
		settingsPart{&t.cfg},
		t.fitLoopPart(),
		&t.logs,
		callbackStates{t.hooks},
		dataModuleState{t.dataModule},
		t.schedulerPart(),
		scalerPart{t.perModule.scaler},
	}
	parts = append(parts, t.cfg.moreParts...)
	return append(parts, t.loggerMarks())
}

// metadataMembers are the members of a trainer state that describe the
// checkpoint rather than a part's state: written in every checkpoint,
// weights-only included, and read by restore and LoadModule.
var metadataMembers = []string{"weights_only", "log_dir", "hparams", "datamodule_hparams", "frozen", "rank_metrics"}

// knownMembers returns the members of a trainer state that this volt
// reads: the metadata and every part's.
func (t *Trainer) knownMembers() map[string]bool {
	known := map[string]bool{}
	for _, m := range metadataMembers {
		known[m] = true
	}
	for _, p := range t.stateParts() {
		for _, m := range partMembers(p) {
			known[m] = true
		}
	}
	return known
}
