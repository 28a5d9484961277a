package jsonfloat_test

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/voltml/volt/internal/jsonfloat"
)

// TestWritesAsEncodingJSON: a finite Float is written as encoding/json
// writes a float64, the non-finite ones as "NaN", "+Inf" and "-Inf"; each
// reads back, as do the spellings older checkpoints hold (strconv's 'g'
// form of the metric state, the callbacks' quoted scores).
func TestWritesAsEncodingJSON(t *testing.T) {
	for _, c := range []struct {
		v     float64
		older []string // other spellings that read as v
	}{
		{0, []string{`"0"`}},
		{0.5, []string{`"0.5"`}},
		{-2.25, []string{`"-2.25"`}},
		{0.1, nil},
		{100, []string{`"100"`}},
		{1e-5, []string{`1e-05`, `"1e-05"`}},
		{1e-7, []string{`1e-07`, `"1e-07"`}},
		{1e6, []string{`1e+06`, `"1e+06"`}},
		{1234567, []string{`1.234567e+06`, `"1.234567e+06"`}},
		{1e21, []string{`"1e+21"`}},
		{-2e-300, []string{`"-2e-300"`}},
		{math.MaxFloat64, []string{`"1.7976931348623157e+308"`}},
		{math.NaN(), nil},
		{math.Inf(1), nil},
		{math.Inf(-1), nil},
	} {
		var want string
		switch {
		case math.IsNaN(c.v):
			want = `"NaN"`
		case math.IsInf(c.v, 1):
			want = `"+Inf"`
		case math.IsInf(c.v, -1):
			want = `"-Inf"`
		default:
			b, err := json.Marshal(c.v) // encoding/json's own spelling
			if err != nil {
				t.Fatal(err)
			}
			want = string(b)
		}
		b, err := json.Marshal(jsonfloat.Float(c.v))
		if err != nil || string(b) != want {
			t.Errorf("Float(%v) is written %s (%v), want %s", c.v, b, err, want)
		}
		for _, s := range append([]string{want}, c.older...) {
			var f jsonfloat.Float
			if err := json.Unmarshal([]byte(s), &f); err != nil {
				t.Fatalf("reading %s: %v", s, err)
			}
			if got := float64(f); got != c.v && !(math.IsNaN(got) && math.IsNaN(c.v)) {
				t.Errorf("%s read back as %v, want %v", s, got, c.v)
			}
		}
	}
}

// TestRejectsOtherStrings: a string volt never wrote is an error naming the
// valid spellings, not a silent value.
func TestRejectsOtherStrings(t *testing.T) {
	for _, b := range []string{`"Infinity"`, `"inf"`, `"nan"`, `"abc"`, `""`, `"1e400"`, `null`, `true`} {
		var f jsonfloat.Float
		err := json.Unmarshal([]byte(b), &f)
		if err == nil {
			t.Errorf("reading %s: accepted as %v", b, f)
			continue
		}
		if strings.HasPrefix(b, `"`) && !strings.Contains(err.Error(), `want a number, "NaN", "+Inf" or "-Inf"`) {
			t.Errorf("reading %s: error %q does not name the valid spellings", b, err)
		}
	}
}

// TestInStructs: the spelling holds as struct fields, map values and
// through pointers, as checkpoints hold them.
func TestInStructs(t *testing.T) {
	type state struct {
		Metrics map[string]jsonfloat.Float `json:"metrics"`
		LR      jsonfloat.Float            `json:"lr"`
		Best    *jsonfloat.Float           `json:"best"`
		None    *jsonfloat.Float           `json:"none"`
	}
	best := jsonfloat.Float(math.Inf(-1))
	in := state{Metrics: map[string]jsonfloat.Float{"loss": jsonfloat.Float(math.NaN()), "lr": 1e-5}, LR: 1e-5, Best: &best}
	const want = `{"metrics":{"loss":"NaN","lr":0.00001},"lr":0.00001,"best":"-Inf","none":null}`
	b, err := json.Marshal(in)
	if err != nil || string(b) != want {
		t.Fatalf("written %s (%v), want %s", b, err, want)
	}
	var out state
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if again, _ := json.Marshal(out); string(again) != want {
		t.Errorf("read back and written again as %s, want %s", again, want)
	}
}

// TestNonFinite: NaN and the infinities are spelled as Float writes them
// (and as Go's strconv does); a finite value has no such spelling.
func TestNonFinite(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
		ok   bool
	}{
		{math.NaN(), "NaN", true},
		{math.Inf(1), "+Inf", true},
		{math.Inf(-1), "-Inf", true},
		{0, "", false},
		{-1e300, "", false},
	} {
		got, ok := jsonfloat.NonFinite(c.v)
		if got != c.want || ok != c.ok {
			t.Errorf("NonFinite(%v) = %q, %v; want %q, %v", c.v, got, ok, c.want, c.ok)
		}
		if ok && got != strconv.FormatFloat(c.v, 'g', -1, 64) {
			t.Errorf("NonFinite(%v) = %q; strconv spells it %q", c.v, got, strconv.FormatFloat(c.v, 'g', -1, 64))
		}
	}
}
