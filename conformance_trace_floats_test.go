package volt_test

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"testing"
)

// traceFloat is a number of a recorded trace: gen_scenarios.py writes a NaN
// or infinite value as the string "NaN", "Infinity" or "-Infinity" (JSON
// has no such numbers), any other as a number.
type traceFloat float64

// UnmarshalJSON implements json.Unmarshaler.
func (f *traceFloat) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) != nil {
		var v float64
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*f = traceFloat(v)
		return nil
	}
	switch s {
	case "NaN":
		*f = traceFloat(math.NaN())
	case "Infinity":
		*f = traceFloat(math.Inf(1))
	case "-Infinity":
		*f = traceFloat(math.Inf(-1))
	default:
		return fmt.Errorf("trace value %s: want a number, \"NaN\", \"Infinity\" or \"-Infinity\"", strconv.Quote(s))
	}
	return nil
}

func traceMetrics(m map[string]traceFloat) map[string]float64 {
	if m == nil {
		return nil
	}
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[k] = float64(v)
	}
	return out
}

// UnmarshalJSON implements json.Unmarshaler: the monitored value and the
// metrics may be non-finite.
func (e *traceEvent) UnmarshalJSON(b []byte) error {
	type plain traceEvent
	raw := struct {
		*plain
		Value   *traceFloat           `json:"value"`
		Metrics map[string]traceFloat `json:"metrics"`
	}{plain: (*plain)(e)}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	e.Value, e.Metrics = nil, traceMetrics(raw.Metrics)
	if raw.Value != nil {
		v := float64(*raw.Value)
		e.Value = &v
	}
	return nil
}

// UnmarshalJSON implements json.Unmarshaler: a logged value may be
// non-finite.
func (r *loggedRow) UnmarshalJSON(b []byte) error {
	type plain loggedRow
	raw := struct {
		*plain
		Metrics map[string]traceFloat `json:"metrics"`
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	r.Metrics = traceMetrics(raw.Metrics)
	return nil
}

// TestTraceFloatsReadNonFinite: the recorder's strings for NaN and the
// infinities read as those values; another string is an error.
func TestTraceFloatsReadNonFinite(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    float64
		wantErr bool
	}{
		{`{"metrics":{"guard":1.5}}`, 1.5, false},
		{`{"metrics":{"guard":"NaN"}}`, math.NaN(), false},
		{`{"metrics":{"guard":"Infinity"}}`, math.Inf(1), false},
		{`{"metrics":{"guard":"-Infinity"}}`, math.Inf(-1), false},
		{`{"metrics":{"guard":"inf"}}`, 0, true},
	} {
		var e traceEvent
		err := json.Unmarshal([]byte(tc.in), &e)
		var r loggedRow
		errRow := json.Unmarshal([]byte(tc.in), &r)
		if (err != nil) != tc.wantErr || (errRow != nil) != tc.wantErr {
			t.Errorf("%s: errors %v, %v; want an error: %t", tc.in, err, errRow, tc.wantErr)
			continue
		}
		if tc.wantErr {
			continue
		}
		if !near(tc.want, e.Metrics["guard"]) || !near(tc.want, r.Metrics["guard"]) {
			t.Errorf("%s: event %v, row %v; want %v", tc.in, e.Metrics["guard"], r.Metrics["guard"], tc.want)
		}
	}
	var e traceEvent
	if err := json.Unmarshal([]byte(`{"hook":"check","value":"-Infinity","epoch":2}`), &e); err != nil || e.Value == nil || !math.IsInf(*e.Value, -1) || e.Hook != "check" || e.Epoch != 2 {
		t.Errorf("event with a non-finite value: %+v, %v", e, err)
	}
}
