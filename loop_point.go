package volt

import (
	"fmt"
	"strings"
)

// LoopPoint is the hook boundary the loops last crossed: recorded in
// Progress (and so in checkpoints) just before the hooks of that boundary
// run, it is what a resumed Fit continues from.
type LoopPoint uint8

// The recorded loop points. Their text form is what checkpoints hold.
const (
	// PointNone: no boundary recorded yet.
	PointNone LoopPoint = iota
	// PointTrainEpochStart: a training epoch started (OnTrainEpochStart).
	PointTrainEpochStart
	// PointTrainBatchStart: a training batch is about to run (OnTrainBatchStart).
	PointTrainBatchStart
	// PointTrainBatchEnd: a training batch and its optimizer steps ran (OnTrainBatchEnd).
	PointTrainBatchEnd
	// PointValidationEpochEnd: a validation's batches ran (OnValidationEpochEnd).
	PointValidationEpochEnd
	// PointValidationEnd: a validation ended (OnValidationEnd).
	PointValidationEnd
	// PointTrainEpochEnd: a training epoch's batches and validations ran (OnTrainEpochEnd).
	PointTrainEpochEnd
	// PointSanityCheckEpochEnd: the sanity check's batches ran.
	PointSanityCheckEpochEnd
	// PointSanityCheckEnd: the sanity check's validation ended.
	PointSanityCheckEnd
	// PointTestEpochEnd: a test's batches ran (OnTestEpochEnd).
	PointTestEpochEnd
	// PointTestEnd: a test ended (OnTestEnd).
	PointTestEnd
	numLoopPoints
)

// loopPointNames are the text forms; those of volt 0.1.0's Stage strings
// are unchanged, so its checkpoints load.
var loopPointNames = [numLoopPoints]string{
	PointNone:                "",
	PointTrainEpochStart:     "train_epoch_start",
	PointTrainBatchStart:     "train_batch_start",
	PointTrainBatchEnd:       "train_batch_end",
	PointValidationEpochEnd:  "validate_epoch_end",
	PointValidationEnd:       "validate_end",
	PointTrainEpochEnd:       "train_epoch_end",
	PointSanityCheckEpochEnd: "sanity_check_epoch_end",
	PointSanityCheckEnd:      "sanity_check_end",
	PointTestEpochEnd:        "test_epoch_end",
	PointTestEnd:             "test_end",
}

// String returns the point's text form.
func (p LoopPoint) String() string {
	if p >= numLoopPoints {
		return fmt.Sprintf("LoopPoint(%d)", uint8(p))
	}
	return loopPointNames[p]
}

// MarshalText implements encoding.TextMarshaler.
func (p LoopPoint) MarshalText() ([]byte, error) {
	if p >= numLoopPoints {
		return nil, fmt.Errorf("volt.LoopPoint: unknown point %d", uint8(p))
	}
	return []byte(loopPointNames[p]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler, rejecting unknown
// names with the list of valid ones.
func (p *LoopPoint) UnmarshalText(b []byte) error {
	for i, name := range loopPointNames {
		if string(b) == name {
			*p = LoopPoint(i)
			return nil
		}
	}
	return fmt.Errorf("volt.LoopPoint: unknown point %q; valid: \"\" and %s", b, strings.Join(quoted(loopPointNames[1:]), ", "))
}

// inTrainEpoch reports whether a Fit recorded at p stopped inside a training
// epoch, before its end hooks.
func (p LoopPoint) inTrainEpoch() bool {
	switch p {
	case PointTrainEpochStart, PointTrainBatchStart, PointTrainBatchEnd, PointValidationEpochEnd, PointValidationEnd:
		return true
	}
	return false
}

// validationDone reports whether p is inside or after a validation run
// (its batches done).
func (p LoopPoint) validationDone() bool {
	return p == PointValidationEpochEnd || p == PointValidationEnd
}

// quoted returns each of names in Go quotes.
func quoted(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%q", n)
	}
	return out
}
