package volt_test

import (
	"fmt"
	"strings"
)

// divergenceClass is one kind of difference between volt and Lightning that
// the generated scenarios show: a design (Guide is text of the
// docs/from-lightning.md line that tells users; the test checks it is there)
// or a known bug still open (Issue names it).
type divergenceClass struct {
	ID     string
	Reason string
	Guide  string
	Issue  string
}

// divergenceClasses are the classes generatedDivergences refers to.
var divergenceClasses = []divergenceClass{}

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
	applies func(genSpec) bool
}{
	{divergenceClass{ID: "overfit-validates-on-train", Reason: "OverfitBatches validates on the training batches; Lightning 2.x on the validation loaders",
		Guide: "trains and validates on the same first training batches"}, nil,
		func(sp genSpec) bool { _, ok := sp.Trainer["overfit_batches"]; return ok }},
	{divergenceClass{ID: "validation-waits-for-window", Reason: "a validation due inside an accumulation window waits for its end; Lightning validates mid-window",
		Guide: "a validation due inside an accumulation window waits for"}, nil,
		validationInsideWindow},
	{divergenceClass{ID: "stop-in-validate-stays-there", Reason: "a stop requested in a Validate ends there; Lightning's should_stop carries into the next fit, which trains nothing",
		Guide: "starts with no stop request"}, nil,
		func(sp genSpec) bool {
			a := sp.Model.Stop
			return a != nil && strings.HasPrefix(a.Hook, "on_validation") && a.Epoch == 0 &&
				len(sp.Stages) > 1 && sp.Stages[0] == "validate" && sp.Stages[1] == "fit"
		}},
	{divergenceClass{ID: "step-save-after-its-validation", Reason: "a step-triggered save with a monitor waits for the validation after its batch (Lightning 2.5.5); 2.2.5 saves first",
		Guide: "behave as in Lightning 2.5.5 (its PR #21106"}, []string{"hooks", "checkpoints"},
		func(sp genSpec) bool {
			mc := sp.Callbacks.Checkpoint
			return mc != nil && anyInt(mc, "every_n_train_steps") > 0 && anyString(mc, "monitor") != ""
		}},
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
	batches := sp.NTrain / 4
	if sp.NTrain%4 != 0 {
		batches++
	}
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

// classKind is "designed" or "known bug" for a class ID.
func classKind(id string) string {
	for _, c := range divergenceClasses {
		if c.ID == id {
			if c.Guide != "" {
				return "designed"
			}
			return "known bug (" + strings.TrimSpace(c.Issue) + ")"
		}
	}
	return "unclassified " + id
}

// generatedDivergences maps a seed to its differing aspects and their class.
var generatedDivergences = map[int]map[string]string{}
