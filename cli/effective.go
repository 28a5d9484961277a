package cli

import "github.com/voltml/volt"

// effectiveTrainer returns c with the zero values that mean a default
// replaced by that default, as volt.NewTrainer reads them: what
// print-config and config.yaml show and the run uses (the same run either
// way). Fields whose zero value means "off", "none" or "chosen at run time"
// (Backend, Accelerator's auto-detection, Seed) are left as they are.
func effectiveTrainer(c volt.Config) volt.Config {
	switch {
	case c.MaxSteps == 0:
		c.MaxSteps = -1
	}
	if c.MaxEpochs == 0 {
		c.MaxEpochs = 1000 // Lightning's default when max_steps is unset
		if c.MaxSteps > 0 {
			c.MaxEpochs = -1
		}
	}
	if c.CheckValEveryNEpoch == 0 {
		c.CheckValEveryNEpoch = 1
	}
	if c.NumSanityValSteps == nil {
		c.NumSanityValSteps = volt.Ptr(2)
	}
	if c.LogEveryNSteps == 0 {
		c.LogEveryNSteps = 50
	}
	if c.AccumulateGradBatches == 0 {
		c.AccumulateGradBatches = 1
	}
	if c.GradientClipAlgorithm == "" {
		c.GradientClipAlgorithm = volt.ClipNorm
	}
	if c.Precision == "" {
		c.Precision = "32-true"
	}
	if c.DefaultRootDir == "" {
		c.DefaultRootDir = "."
	}
	if c.Accelerator == "" {
		c.Accelerator = "auto"
	}
	if c.NumNodes == 0 {
		c.NumNodes = 1
	}
	return c
}
