package volt

import "github.com/voltml/volt/internal/jsonfloat"

// toJSONFloats converts a metric map for the checkpoint's metadata, whose
// values keep NaN and ±Inf (jsonfloat.Float).
func toJSONFloats(m map[string]float64) map[string]jsonfloat.Float {
	if m == nil {
		return nil
	}
	out := make(map[string]jsonfloat.Float, len(m))
	for k, v := range m {
		out[k] = jsonfloat.Float(v)
	}
	return out
}

// fromJSONFloats converts a restored metric map back (never nil).
func fromJSONFloats(m map[string]jsonfloat.Float) map[string]float64 {
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[k] = float64(v)
	}
	return out
}
