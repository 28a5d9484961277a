// Package optim holds volt's optimizers: SGD (momentum, Nesterov), Adam, AdamW
// and RMSProp, with PyTorch's exact update rules, built as GoMLX graph ops.
// Start with [SGD], [Adam], [AdamW] or [RMSProp], returned from a module's
// ConfigureOptimizers with volt.Optimize; learning-rate schedulers implement
// [Scheduler] ([StepLR], [CosineAnnealingLR], [OneCycleLR], …).
//
// Schedulers are plain structs whose zero fields take PyTorch's defaults:
// write &optim.ReduceLROnPlateau{Patience: 1, Factor: 0.5} in
// ConfigureOptimizers, and Fit reports an invalid field by name (each
// scheduler's Validate) before training starts. The New… constructors set
// the same fields and validate at once.
//
// An Optimizer is a plain configuration value. The trainer turns it into
// graph operations once, when the training step is traced; the learning rate
// lives in a variable of the model store, so schedulers change it between
// steps without recompiling anything.
package optim

import (
	"fmt"
	"math"
)

// Kind names an optimization algorithm.
type Kind string

// The optimization algorithms volt implements.
const (
	KindSGD     Kind = "sgd"
	KindAdam    Kind = "adam"
	KindAdamW   Kind = "adamw"
	KindRMSProp Kind = "rmsprop"
)

// Optimizer configures one optimizer. Build it with SGD, Adam, AdamW or
// RMSProp and refine it with the With… methods; the zero value is invalid.
type Optimizer struct {
	Kind        Kind
	LR          float64    // learning rate, > 0
	Momentum    float64    // SGD and RMSProp momentum, in [0, 1)
	Dampening   float64    // SGD dampening, in [0, 1]
	Nesterov    bool       // SGD Nesterov momentum (needs Momentum > 0 and Dampening 0)
	Betas       [2]float64 // Adam/AdamW coefficients, each in [0, 1)
	Eps         float64    // Adam/AdamW/RMSProp denominator term, > 0
	Alpha       float64    // RMSProp smoothing constant, in [0, 1)
	WeightDecay float64    // L2 penalty (decoupled for AdamW), >= 0
}

// SGD returns stochastic gradient descent with PyTorch's defaults
// (no momentum, no weight decay).
func SGD(lr float64) *Optimizer { return &Optimizer{Kind: KindSGD, LR: lr} }

// Adam returns Adam with PyTorch's defaults: betas (0.9, 0.999), eps 1e-8,
// no weight decay.
func Adam(lr float64) *Optimizer {
	return &Optimizer{Kind: KindAdam, LR: lr, Betas: [2]float64{0.9, 0.999}, Eps: 1e-8}
}

// AdamW returns Adam with decoupled weight decay and PyTorch's defaults:
// betas (0.9, 0.999), eps 1e-8, weight decay 0.01.
func AdamW(lr float64) *Optimizer {
	return &Optimizer{Kind: KindAdamW, LR: lr, Betas: [2]float64{0.9, 0.999}, Eps: 1e-8, WeightDecay: 0.01}
}

// RMSProp returns RMSProp with PyTorch's defaults: alpha 0.99, eps 1e-8.
func RMSProp(lr float64) *Optimizer {
	return &Optimizer{Kind: KindRMSProp, LR: lr, Alpha: 0.99, Eps: 1e-8}
}

// WithMomentum sets the momentum (SGD, RMSProp) and returns o.
func (o *Optimizer) WithMomentum(m float64) *Optimizer { o.Momentum = m; return o }

// WithNesterov turns on Nesterov momentum (SGD) and returns o.
func (o *Optimizer) WithNesterov() *Optimizer { o.Nesterov = true; return o }

// WithDampening sets SGD's momentum dampening and returns o.
func (o *Optimizer) WithDampening(d float64) *Optimizer { o.Dampening = d; return o }

// WithWeightDecay sets the weight decay and returns o.
func (o *Optimizer) WithWeightDecay(wd float64) *Optimizer { o.WeightDecay = wd; return o }

// WithBetas sets Adam's coefficients and returns o.
func (o *Optimizer) WithBetas(beta1, beta2 float64) *Optimizer {
	o.Betas = [2]float64{beta1, beta2}
	return o
}

// WithEps sets the denominator term and returns o.
func (o *Optimizer) WithEps(eps float64) *Optimizer { o.Eps = eps; return o }

// WithAlpha sets RMSProp's smoothing constant and returns o.
func (o *Optimizer) WithAlpha(alpha float64) *Optimizer { o.Alpha = alpha; return o }

// Validate reports the first invalid field, naming it and its valid range.
func (o *Optimizer) Validate() error {
	if o == nil {
		return fmt.Errorf("optim: optimizer is nil; use optim.SGD, optim.Adam, optim.AdamW or optim.RMSProp")
	}
	bad := func(field string, v float64, want string) error {
		return fmt.Errorf("optim.%s.%s: must be %s, got %v", o.Kind, field, want, v)
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch o.Kind {
	case KindSGD, KindAdam, KindAdamW, KindRMSProp:
	default:
		return fmt.Errorf("optim: unknown optimizer kind %q; valid: sgd, adam, adamw, rmsprop", o.Kind)
	}
	if !(o.LR > 0) || !finite(o.LR) {
		return bad("LR", o.LR, "a finite number > 0")
	}
	if o.WeightDecay < 0 || !finite(o.WeightDecay) {
		return bad("WeightDecay", o.WeightDecay, ">= 0")
	}
	switch o.Kind {
	case KindSGD:
		if o.Momentum < 0 || o.Momentum >= 1 {
			return bad("Momentum", o.Momentum, "in [0, 1)")
		}
		if o.Dampening < 0 || o.Dampening > 1 {
			return bad("Dampening", o.Dampening, "in [0, 1]")
		}
		if o.Nesterov && (o.Momentum == 0 || o.Dampening != 0) {
			return fmt.Errorf("optim.sgd.Nesterov: needs Momentum > 0 and Dampening 0, got Momentum %v, Dampening %v", o.Momentum, o.Dampening)
		}
	case KindAdam, KindAdamW:
		for i, b := range o.Betas {
			if b < 0 || b >= 1 {
				return bad(fmt.Sprintf("Betas[%d]", i), b, "in [0, 1)")
			}
		}
		if !(o.Eps > 0) {
			return bad("Eps", o.Eps, "> 0")
		}
	case KindRMSProp:
		if o.Alpha < 0 || o.Alpha >= 1 {
			return bad("Alpha", o.Alpha, "in [0, 1)")
		}
		if o.Momentum < 0 || o.Momentum >= 1 {
			return bad("Momentum", o.Momentum, "in [0, 1)")
		}
		if !(o.Eps > 0) {
			return bad("Eps", o.Eps, "> 0")
		}
	}
	return nil
}
