package volt_test

import "strings"

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
