package volt

// This file is the state parts of the callbacks and the data module: what
// their own State methods return, saved under their keys.

import (
	"fmt"
	"maps"
	"slices"
)

// callbackStates is the state part of the Stateful callbacks (the module's
// too, when it is one): each one's state under its StateKey.
type callbackStates struct{ hooks *hookSet }

func (callbackStates) stateKey() string { return "callbacks" }

func (p callbackStates) save(st *stateDoc) error {
	states := map[string][]byte{}
	for _, tg := range p.hooks.by[hookStateful] {
		s := tg.value.(Stateful)
		key := s.StateKey()
		if _, dup := states[key]; dup {
			return fmt.Errorf("two callbacks have the state key %q; StateKey must be unique", key)
		}
		b, err := s.State()
		if err != nil {
			return fmt.Errorf("%s.State: %w", tg.name, err)
		}
		states[key] = b
	}
	return st.putNonEmpty("callbacks", states)
}

// load gives the module and each Stateful callback its saved state. One
// with no state in the checkpoint starts fresh, and a saved state that
// none claims (by StateKey) is left unused; both are said once, naming the
// callback and the keys: adding or removing a callback when resuming is
// legitimate (Lightning allows both, warning of the second), but the user
// should know that its state did not carry over.
func (p callbackStates) load(st *stateDoc) error {
	var saved map[string][]byte
	if _, err := st.get("callbacks", &saved); err != nil {
		return err
	}
	path := st.path
	claimed := map[string]bool{}
	for _, tg := range p.hooks.moduleFirst(hookStateful) {
		s := tg.value.(Stateful)
		key := s.StateKey()
		claimed[key] = true
		b, ok := saved[key]
		if !ok {
			st.warnOnce("no-state-"+key+"-"+path, "volt: the checkpoint has no state for "+tg.name+"; it starts fresh",
				"state_key", key, "checkpoint", path, "saved_state_keys", slices.Sorted(maps.Keys(saved)))
			continue
		}
		if err := s.LoadState(b); err != nil {
			return fmt.Errorf("checkpoint %s: %s.LoadState: %w", path, tg.name, err)
		}
	}
	var unclaimed []string
	for _, key := range slices.Sorted(maps.Keys(saved)) {
		if !claimed[key] {
			unclaimed = append(unclaimed, key)
		}
	}
	if len(unclaimed) > 0 {
		st.warnOnce("unclaimed-state-"+path, "volt: the checkpoint holds states of callbacks this run does not have; add them to Config.Callbacks to restore them",
			"state_keys", unclaimed, "checkpoint", path)
	}
	return nil
}

// dataModuleState is the state part of a DataStateful data module.
type dataModuleState struct{ dm DataModule }

func (dataModuleState) stateKey() string { return "datamodule" }

func (p dataModuleState) save(st *stateDoc) error {
	s, ok := p.dm.(DataStateful)
	if !ok {
		return nil
	}
	b, err := s.State()
	if err != nil {
		return fmt.Errorf("%T.State: %w", p.dm, err)
	}
	return st.putNonEmpty("datamodule", b)
}

// load gives the data module its saved state; one the checkpoint lacks is
// said once, and the data module starts fresh.
func (p dataModuleState) load(st *stateDoc) error {
	s, ok := p.dm.(DataStateful)
	if !ok {
		return nil
	}
	var b []byte
	if has, err := st.get("datamodule", &b); err != nil {
		return err
	} else if !has || b == nil {
		st.warnOnce("no-datamodule-state-"+st.path, fmt.Sprintf("volt: the checkpoint has no state for the data module (%T is DataStateful); it starts fresh", p.dm),
			"checkpoint", st.path)
		return nil
	}
	if err := s.LoadState(b); err != nil {
		return fmt.Errorf("checkpoint %s: %T.LoadState: %w", st.path, p.dm, err)
	}
	return nil
}
