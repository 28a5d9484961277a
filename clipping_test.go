package volt_test

import (
	"math"
	"slices"
	"testing"

	"github.com/voltml/volt"
)

// valueClipper clips its gradients by value itself, whatever is configured.
type valueClipper struct {
	boring
	calls []string
}

func (m *valueClipper) ConfigureGradientClipping(s *volt.Step, opt int, grads []volt.Gradient, clipVal float64, algo volt.ClipAlgorithm) {
	m.calls = append(m.calls, string(algo))
	volt.ClipGradients(grads, 1e-3, volt.ClipValue)
}

func TestGradientClipperOverridesClipping(t *testing.T) {
	m := &valueClipper{boring: boring{LR: 1}}
	before := fitBoring(t, volt.Config{MaxSteps: 1, Precision: "64-true", DisableCheckpointing: true}, loaderOf(regression(16, 4), 16), &boring{LR: 1e-300})
	after := fitBoring(t, volt.Config{MaxSteps: 1, Precision: "64-true", GradientClipVal: 10}, loaderOf(regression(16, 4), 16), m)
	if !slices.Equal(m.calls, []string{"norm"}) {
		t.Errorf("ConfigureGradientClipping calls %v, want one with the configured algorithm", m.calls)
	}
	w0, w1 := floats(t, before, "/dense")["/dense/dense/weights"], floats(t, after, "/dense")["/dense/dense/weights"]
	for i := range w0 {
		if d := math.Abs(w1[i] - w0[i]); d > 1e-3*(1+1e-9) {
			t.Errorf("weight %d moved %g: the module's value clipping was not used", i, d)
		}
	}
}
