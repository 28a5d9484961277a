package volt

import (
	"fmt"
	"reflect"
	"strings"
)

// Optional interfaces are found by type assertion, so a method with the right
// name and a wrong signature would be ignored without a word (a classic Go
// pitfall). volt checks every method named like a method of a hook-table
// interface that the target may implement, and reports the mismatch instead.

// hookMethods maps, for each kind of target, a method name to the row of
// the interface that has it.
var hookMethods = func() map[targetKind]map[string]hookID {
	m := map[targetKind]map[string]hookID{}
	for _, kind := range []targetKind{onCallback, onModule, onDataModule} {
		m[kind] = map[string]hookID{}
		for id := range hookTable {
			spec := &hookTable[id]
			if spec.iface == nil || spec.on&kind == 0 {
				continue
			}
			for i := range spec.iface.NumMethod() {
				name := spec.iface.Method(i).Name
				if other, dup := m[kind][name]; dup {
					panic(fmt.Sprintf("volt: hook table: %s and %s both have a method %s for the same kind of target", spec.iface, hookTable[other].iface, name))
				}
				m[kind][name] = hookID(id)
			}
		}
	}
	return m
}()

// checkSignatures reports methods of v named like a method of an interface
// that a target of kind may implement, when v does not implement it: another
// signature, or the interface's other methods are missing.
func checkSignatures(what string, v any, kind targetKind) error {
	if v == nil {
		return nil
	}
	t := reflect.TypeOf(v)
	var bad []string
	reported := map[hookID]bool{}
	for i := range t.NumMethod() {
		m := t.Method(i)
		id, ok := hookMethods[kind][m.Name]
		if !ok || reported[id] || t.Implements(hookTable[id].iface) {
			continue
		}
		it := hookTable[id].iface
		want, _ := it.MethodByName(m.Name)
		have, wantSig := signature(m.Name, m.Type, 1), signature(m.Name, want.Type, 0)
		if have != wantSig {
			bad = append(bad, fmt.Sprintf("%s has %s, want %s (%s)", t, have, wantSig, it))
			continue
		}
		reported[id] = true
		bad = append(bad, fmt.Sprintf("%s has %s but not all of %s: %s", t, have, it, missingMethods(t, it)))
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%s: a method has the name of a volt interface but not its signature, so volt would ignore it: %s", what, strings.Join(bad, "; "))
}

// missingMethods lists the methods of interface it that t lacks or has with
// another signature.
func missingMethods(t, it reflect.Type) string {
	var miss []string
	for i := range it.NumMethod() {
		want := it.Method(i)
		wantSig := signature(want.Name, want.Type, 0)
		if m, ok := t.MethodByName(want.Name); !ok || signature(m.Name, m.Type, 1) != wantSig {
			miss = append(miss, "needs "+wantSig)
		}
	}
	return strings.Join(miss, ", ")
}

// signature writes name with the parameters (from index first, skipping a
// receiver) and results of function type ft.
func signature(name string, ft reflect.Type, first int) string {
	var in, out []string
	for i := first; i < ft.NumIn(); i++ {
		in = append(in, ft.In(i).String())
	}
	for i := range ft.NumOut() {
		out = append(out, ft.Out(i).String())
	}
	s := name + "(" + strings.Join(in, ", ") + ")"
	switch len(out) {
	case 0:
	case 1:
		s += " " + out[0]
	default:
		s += " (" + strings.Join(out, ", ") + ")"
	}
	return s
}
