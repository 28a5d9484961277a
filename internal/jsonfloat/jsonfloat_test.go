package jsonfloat_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/voltml/volt/internal/jsonfloat"
)

// TestWrittenAsBefore pins each type's bytes to what the type it replaced
// wrote (the trainer's metric state, the schedulers' state, the callbacks'
// scores), and reads every one of them back.
func TestWrittenAsBefore(t *testing.T) {
	for _, c := range []struct {
		v                  float64
		float, std, quoted string
	}{
		{0, `0`, `0`, `"0"`},
		{0.5, `0.5`, `0.5`, `"0.5"`},
		{-2.25, `-2.25`, `-2.25`, `"-2.25"`},
		{0.1, `0.1`, `0.1`, `"0.1"`},
		{100, `100`, `100`, `"100"`},
		{3.14159, `3.14159`, `3.14159`, `"3.14159"`},
		{1e-5, `1e-05`, `0.00001`, `"1e-05"`},
		{1e-7, `1e-07`, `1e-7`, `"1e-07"`},
		{1e6, `1e+06`, `1000000`, `"1e+06"`},
		{1234567, `1.234567e+06`, `1234567`, `"1.234567e+06"`},
		{1e21, `1e+21`, `1e+21`, `"1e+21"`},
		{-2e-300, `-2e-300`, `-2e-300`, `"-2e-300"`},
		{math.MaxFloat64, `1.7976931348623157e+308`, `1.7976931348623157e+308`, `"1.7976931348623157e+308"`},
		{math.NaN(), `"NaN"`, `"NaN"`, `"NaN"`},
		{math.Inf(1), `"+Inf"`, `"+Inf"`, `"+Inf"`},
		{math.Inf(-1), `"-Inf"`, `"-Inf"`, `"-Inf"`},
	} {
		for _, w := range []struct {
			name string
			v    any
			want string
		}{
			{"Float", jsonfloat.Float(c.v), c.float},
			{"StdFloat", jsonfloat.StdFloat(c.v), c.std},
			{"Quoted", jsonfloat.Quoted(c.v), c.quoted},
		} {
			if b, err := json.Marshal(w.v); err != nil || string(b) != w.want {
				t.Errorf("%s(%v) is written %s (%v), want %s", w.name, c.v, b, err, w.want)
			}
		}
		// Every type reads every spelling: a field may be read by a type
		// other than the one that wrote it only across versions, but a reader
		// that takes all of them cannot be the one that fails.
		for _, b := range []string{c.float, c.std, c.quoted} {
			var f jsonfloat.Float
			var s jsonfloat.StdFloat
			var q jsonfloat.Quoted
			for _, dst := range []any{&f, &s, &q} {
				if err := json.Unmarshal([]byte(b), dst); err != nil {
					t.Fatalf("reading %s into %T: %v", b, dst, err)
				}
			}
			for _, got := range []float64{float64(f), float64(s), float64(q)} {
				if got != c.v && !(math.IsNaN(got) && math.IsNaN(c.v)) {
					t.Errorf("%s read back as %v, want %v", b, got, c.v)
				}
			}
		}
	}
}

// TestRejectsOtherStrings: a string that none of the types writes is an
// error naming the valid spellings, not a silent value.
func TestRejectsOtherStrings(t *testing.T) {
	for _, b := range []string{`"Infinity"`, `"inf"`, `"nan"`, `"abc"`, `""`, `"1e400"`, `null`, `true`} {
		var f jsonfloat.Float
		var s jsonfloat.StdFloat
		var q jsonfloat.Quoted
		for _, dst := range []any{&f, &s, &q} {
			err := json.Unmarshal([]byte(b), dst)
			if err == nil {
				t.Errorf("reading %s into %T: accepted", b, dst)
				continue
			}
			if strings.HasPrefix(b, `"`) && !strings.Contains(err.Error(), `want a number, "NaN", "+Inf" or "-Inf"`) {
				t.Errorf("reading %s into %T: error %q does not name the valid spellings", b, dst, err)
			}
		}
	}
}

// TestInStructs: the types keep their spelling as struct fields, map values
// and through pointers, as checkpoints hold them.
func TestInStructs(t *testing.T) {
	type state struct {
		Metrics map[string]jsonfloat.Float `json:"metrics"`
		LR      jsonfloat.StdFloat         `json:"lr"`
		Best    *jsonfloat.Quoted          `json:"best"`
		None    *jsonfloat.Quoted          `json:"none"`
	}
	best := jsonfloat.Quoted(math.Inf(-1))
	in := state{Metrics: map[string]jsonfloat.Float{"loss": jsonfloat.Float(math.NaN()), "lr": 1e-5}, LR: 1e-5, Best: &best}
	const want = `{"metrics":{"loss":"NaN","lr":1e-05},"lr":0.00001,"best":"-Inf","none":null}`
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
