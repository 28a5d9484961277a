package volt

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// jsonFloat is a float64 in a checkpoint's JSON metadata that keeps NaN and
// ±Inf (as the strings "NaN", "+Inf" and "-Inf"): encoding/json refuses
// them, and one non-finite logged value would otherwise make every save fail.
type jsonFloat float64

// MarshalJSON implements json.Marshaler.
func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return []byte(`"NaN"`), nil
	case math.IsInf(v, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (f *jsonFloat) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		switch s {
		case "NaN":
			*f = jsonFloat(math.NaN())
		case "+Inf":
			*f = jsonFloat(math.Inf(1))
		case "-Inf":
			*f = jsonFloat(math.Inf(-1))
		default:
			return fmt.Errorf("invalid number %q (want a number, \"NaN\", \"+Inf\" or \"-Inf\")", s)
		}
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*f = jsonFloat(v)
	return nil
}

// toJSONFloats converts a metric map for the checkpoint's metadata.
func toJSONFloats(m map[string]float64) map[string]jsonFloat {
	if m == nil {
		return nil
	}
	out := make(map[string]jsonFloat, len(m))
	for k, v := range m {
		out[k] = jsonFloat(v)
	}
	return out
}

// fromJSONFloats converts a restored metric map back (never nil).
func fromJSONFloats(m map[string]jsonFloat) map[string]float64 {
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[k] = float64(v)
	}
	return out
}
