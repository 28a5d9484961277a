// Package jsonfloat holds Float, the float64 that volt writes into a
// checkpoint's JSON so that NaN and ±Inf survive (encoding/json refuses
// them, and one non-finite logged value or monitored score would otherwise
// make every save fail): the trainer's metric state, the learning-rate
// schedulers' state and the callbacks' scores all use it.
//
// A Float is written as encoding/json writes a float64 (0.5, 0.00001,
// 1e-7, 1234567, 1e+21), or as the string "NaN", "+Inf" or "-Inf". It reads
// a JSON number, or a string that is "NaN", "+Inf", "-Inf" or a finite
// number ("0.25", "1e-05"): every spelling volt has written, so that a
// checkpoint from before volt wrote one spelling loads.
package jsonfloat

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Float is a float64 written as a JSON number, or as "NaN", "+Inf" or
// "-Inf".
type Float float64

// MarshalJSON implements json.Marshaler.
func (f Float) MarshalJSON() ([]byte, error) {
	if s, ok := NonFinite(float64(f)); ok {
		return []byte(`"` + s + `"`), nil
	}
	return json.Marshal(float64(f))
}

// NonFinite returns the spelling of a NaN or an infinity that Float
// writes ("NaN", "+Inf" or "-Inf", as Go's strconv spells them) and true,
// or "" and false for a finite v. Text for people that is no Python's
// (the HTML report's tables) spells them so too.
func NonFinite(v float64) (string, bool) {
	switch {
	case math.IsNaN(v):
		return "NaN", true
	case math.IsInf(v, 1):
		return "+Inf", true
	case math.IsInf(v, -1):
		return "-Inf", true
	}
	return "", false
}

// UnmarshalJSON implements json.Unmarshaler.
func (f *Float) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return json.Unmarshal(b, (*float64)(f))
	}
	switch s {
	case "NaN":
		*f = Float(math.NaN())
		return nil
	case "+Inf":
		*f = Float(math.Inf(1))
		return nil
	case "-Inf":
		*f = Float(math.Inf(-1))
		return nil
	}
	// Older checkpoints quoted the callbacks' finite scores too.
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("invalid number %q (want a number, \"NaN\", \"+Inf\" or \"-Inf\")", s)
	}
	*f = Float(v)
	return nil
}
