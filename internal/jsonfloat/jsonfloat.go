// Package jsonfloat holds the float64 types that volt writes into a
// checkpoint's JSON so that NaN and ±Inf survive (encoding/json refuses
// them, and one non-finite logged value or monitored score would otherwise
// make every save fail).
//
// All three read the same way: a JSON number, or a string that is "NaN",
// "+Inf", "-Inf" or a finite number ("0.25"). They differ only in how they
// write a value, each in the spelling its checkpoint field has always had,
// so that a checkpoint is written byte for byte as before and every
// checkpoint written before loads:
//
//   - [Float]: a number in strconv's shortest 'g' form (1e-05, 1e+06), the
//     trainer's metric state;
//   - [StdFloat]: a number as encoding/json writes a float64 (0.00001,
//     1000000), the learning-rate schedulers' state;
//   - [Quoted]: always a string ("0.25", "+Inf"), the callbacks' scores.
//
// Non-finite values are "NaN", "+Inf" and "-Inf" in all three.
package jsonfloat

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Float is a float64 written as a JSON number in strconv's shortest 'g'
// form, or as "NaN", "+Inf" or "-Inf".
type Float float64

// StdFloat is a float64 written as a JSON number as encoding/json writes a
// float64, or as "NaN", "+Inf" or "-Inf".
type StdFloat float64

// Quoted is a float64 written as a JSON string: strconv's shortest 'g'
// form, "NaN", "+Inf" or "-Inf".
type Quoted float64

// MarshalJSON implements json.Marshaler.
func (f Float) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if !finite(v) {
		return quote(v), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

// MarshalJSON implements json.Marshaler.
func (f StdFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if !finite(v) {
		return quote(v), nil
	}
	return json.Marshal(v)
}

// MarshalJSON implements json.Marshaler.
func (f Quoted) MarshalJSON() ([]byte, error) { return quote(float64(f)), nil }

// UnmarshalJSON implements json.Unmarshaler.
func (f *Float) UnmarshalJSON(b []byte) error { return read(b, (*float64)(f)) }

// UnmarshalJSON implements json.Unmarshaler.
func (f *StdFloat) UnmarshalJSON(b []byte) error { return read(b, (*float64)(f)) }

// UnmarshalJSON implements json.Unmarshaler.
func (f *Quoted) UnmarshalJSON(b []byte) error { return read(b, (*float64)(f)) }

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// quote returns v as a JSON string in strconv's shortest 'g' form ("NaN",
// "+Inf" and "-Inf" for the non-finite values).
func quote(v float64) []byte {
	b := append([]byte{'"'}, strconv.FormatFloat(v, 'g', -1, 64)...)
	return append(b, '"')
}

// read decodes b, a JSON number or one of the strings the types write, into
// dst.
func read(b []byte, dst *float64) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return json.Unmarshal(b, dst)
	}
	switch s {
	case "NaN":
		*dst = math.NaN()
		return nil
	case "+Inf":
		*dst = math.Inf(1)
		return nil
	case "-Inf":
		*dst = math.Inf(-1)
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !finite(v) {
		return fmt.Errorf("invalid number %q (want a number, \"NaN\", \"+Inf\" or \"-Inf\")", s)
	}
	*dst = v
	return nil
}
