// Package epochs checks the examples' -epochs flag as package cli checks
// trainer.max_epochs: a value volt.Config would read otherwise than the
// user means is refused, naming the flag and what would be valid.
package epochs

import "fmt"

// Check returns an error for an -epochs value of n that the example cannot
// take: 0 (Lightning's max_epochs=0 trains no epoch, but volt.Config reads
// 0 as its default, 1000 epochs) and any other value below 1, or below -1
// (no limit) when noLimit is true (an example that -max-steps or Ctrl-C
// ends).
func Check(n int, noLimit bool) error {
	want := "a positive number of epochs"
	if noLimit {
		want += ", or -1 for no limit"
	}
	switch {
	case n == 0:
		return fmt.Errorf("-epochs=0: 0 trains no epoch in Lightning, but volt reads 0 as its default (1000 epochs); give %s", want)
	case n < 0 && !(noLimit && n == -1):
		return fmt.Errorf("-epochs=%d: want %s", n, want)
	}
	return nil
}
