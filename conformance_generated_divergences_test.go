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
