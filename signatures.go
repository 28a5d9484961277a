package volt

import (
	"fmt"
	"reflect"
	"strings"
)

// Optional interfaces are found by type assertion, so a method with the right
// name and a wrong signature would be ignored without a word (a classic Go
// pitfall). volt checks every method named like one of its interfaces'
// methods and reports the mismatch instead.

// optionalInterfaces maps each optional method name to its interface.
var optionalInterfaces = func() map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for _, p := range []any{
		(*ValidationStepper)(nil), (*TestStepper)(nil), (*PredictStepper)(nil), (*OptimizerConfigurer)(nil),
		(*HParamser)(nil), (*AutomaticOptimizer)(nil), (*TBPTTStepper)(nil), (*TBPTTSplitter)(nil), (*GradientClipper)(nil),
		(*Setup)(nil), (*Teardown)(nil), (*OnFitStart)(nil), (*OnFitEnd)(nil), (*OnSanityCheckStart)(nil), (*OnSanityCheckEnd)(nil),
		(*OnTrainStart)(nil), (*OnTrainEnd)(nil), (*OnTrainEpochStart)(nil), (*OnTrainEpochEnd)(nil),
		(*OnTrainBatchStart)(nil), (*OnTrainBatchEnd)(nil),
		(*OnValidationStart)(nil), (*OnValidationEnd)(nil), (*OnValidationEpochStart)(nil), (*OnValidationEpochEnd)(nil),
		(*OnValidationBatchStart)(nil), (*OnValidationBatchEnd)(nil),
		(*OnTestStart)(nil), (*OnTestEnd)(nil), (*OnTestEpochStart)(nil), (*OnTestEpochEnd)(nil),
		(*OnTestBatchStart)(nil), (*OnTestBatchEnd)(nil),
		(*OnPredictStart)(nil), (*OnPredictEnd)(nil), (*OnPredictEpochStart)(nil), (*OnPredictEpochEnd)(nil),
		(*OnPredictBatchStart)(nil), (*OnPredictBatchEnd)(nil), (*OnException)(nil),
		(*OnBeforeBackward)(nil), (*OnAfterBackward)(nil), (*OnBeforeOptimizerStep)(nil),
	} {
		it := reflect.TypeOf(p).Elem()
		for i := range it.NumMethod() {
			m[it.Method(i).Name] = it
		}
	}
	return m
}()

// dataInterfaces are the optional interfaces of a data module. Setup and
// Teardown have the data-module signatures here.
var dataInterfaces = func() map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for _, p := range []any{(*TrainDataloader)(nil), (*ValDataloaders)(nil), (*TestDataloaders)(nil),
		(*PredictDataloaders)(nil), (*DataPreparer)(nil), (*DataSetup)(nil), (*DataTeardown)(nil), (*HParamser)(nil)} {
		it := reflect.TypeOf(p).Elem()
		for i := range it.NumMethod() {
			m[it.Method(i).Name] = it
		}
	}
	return m
}()

// checkSignatures reports methods of v named like a method of one of
// interfaces but with another signature.
func checkSignatures(what string, v any, interfaces map[string]reflect.Type) error {
	if v == nil {
		return nil
	}
	t := reflect.TypeOf(v)
	var bad []string
	for i := range t.NumMethod() {
		m := t.Method(i)
		it, ok := interfaces[m.Name]
		if !ok || t.Implements(it) {
			continue
		}
		want, _ := it.MethodByName(m.Name)
		bad = append(bad, fmt.Sprintf("%s has %s, want %s (volt.%s)",
			t, signature(m.Name, m.Type, 1), signature(m.Name, want.Type, 0), it.Name()))
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%s: a method has the name of a volt interface but not its signature, so volt would ignore it: %s", what, strings.Join(bad, "; "))
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
