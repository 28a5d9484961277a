package volt_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/checkpoint"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// batchCounter is a Stateful callback: it counts the training batches it saw.
type batchCounter struct{ batches int }

func (c *batchCounter) StateKey() string       { return "batch_counter" }
func (c *batchCounter) State() ([]byte, error) { return []byte(strconv.Itoa(c.batches)), nil }
func (c *batchCounter) LoadState(b []byte) (err error) {
	c.batches, err = strconv.Atoi(string(b))
	return err
}
func (c *batchCounter) OnTrainBatchEnd(*volt.Trainer, *volt.StepOutput, *data.Batch, int) error {
	c.batches++
	return nil
}

// statefulLoaders is resumeData with a data module state.
type statefulLoaders struct{ volt.Loaders }

func (statefulLoaders) State() ([]byte, error) { return []byte(`"position"`), nil }
func (statefulLoaders) LoadState([]byte) error { return nil }

// TestResumeRejectsOrSaysIncompleteState: a checkpoint whose trainer state
// lacks what Fit resumes from (its progress, a progress version this volt
// reads) is an error naming the part and the file; parts that the run goes
// on without (a callback's or the data module's state, parts this volt does
// not know, a newer volt_version, another AccumulateGradBatches) are said
// once, as a warning through the trainer's logger naming them. An intact
// checkpoint resumes without a warning.
func TestResumeRejectsOrSaysIncompleteState(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.ckpt")
	cfg := quiet(volt.Config{MaxEpochs: 1, AccumulateGradBatches: 2, Callbacks: []volt.Callback{&batchCounter{}}})
	tr := testutil.NewTrainer(t, cfg)
	dm := statefulLoaders{resumeData()}
	if err := tr.Fit(t.Context(), &adamBoring{}, dm); err != nil {
		t.Fatal(err)
	}
	if err := tr.SaveCheckpoint(base, false); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name       string
		edit       func(f *checkpoint.File, state map[string]any)
		noCallback bool // resume without the batchCounter
		accumulate int
		wantErr    string   // "" for a run that must succeed
		wantWarn   []string // in one warning line, in any order
		steps      int64    // the resumed run's last global step; 0 means 8
	}{
		{name: "intact"},
		{name: "no progress", edit: func(_ *checkpoint.File, s map[string]any) { delete(s, "progress") },
			wantErr: `the trainer state has no "progress"`},
		{name: "unknown progress version", edit: func(_ *checkpoint.File, s map[string]any) { s["progress"].(map[string]any)["version"] = 7 },
			wantErr: `"progress" has version 7 (a newer volt's); this volt (` + volt.Version + `) reads version 1 only`},
		{name: "no callback states", edit: func(_ *checkpoint.File, s map[string]any) { delete(s, "callbacks") },
			wantWarn: []string{"no state for *volt_test.batchCounter; it starts fresh", "state_key=batch_counter", "saved_state_keys=[]"}},
		{name: "a callback state no callback claims", noCallback: true,
			wantWarn: []string{"states of callbacks this run does not have", "state_keys=[batch_counter]"}},
		{name: "no data module state", edit: func(_ *checkpoint.File, s map[string]any) { delete(s, "datamodule") },
			wantWarn: []string{"no state for the data module (volt_test.statefulLoaders is DataStateful)"}},
		{name: "a part this volt does not know", edit: func(_ *checkpoint.File, s map[string]any) { s["from_the_future"] = true },
			wantWarn: []string{"parts this volt does not know", "parts=[from_the_future]"}},
		{name: "newer volt_version", edit: func(f *checkpoint.File, _ map[string]any) { f.VoltVersion = "99.0.0" },
			wantWarn: []string{"written by a newer volt", "volt_version=99.0.0", "this_volt=" + volt.Version}},
		{name: "no volt_version", edit: func(f *checkpoint.File, _ map[string]any) { f.VoltVersion = "" },
			wantWarn: []string{"does not say which volt wrote it"}},
		{name: "other AccumulateGradBatches", accumulate: 3,
			wantWarn: []string{"Config.AccumulateGradBatches=2, this Config has 3", "accumulating 2 batches"}},
		// What cannot be true is refused, naming the part and what is valid.
		{name: "volt_version -1", edit: func(f *checkpoint.File, _ map[string]any) { f.VoltVersion = "-1" },
			wantErr: `volt_version "-1" is not a version (MAJOR.MINOR.PATCH, as this volt writes "` + volt.Version + `")`},
		{name: "volt_version null", edit: func(f *checkpoint.File, _ map[string]any) { f.VoltVersion = "null" },
			wantErr: `volt_version "null" is not a version`},
		{name: "accumulation 0", edit: func(_ *checkpoint.File, s map[string]any) { s["accumulate_grad_batches"] = 0 },
			wantErr: `"accumulate_grad_batches" is 0; a run accumulates 1 or more batches per optimizer step`},
		{name: "accumulation -4", edit: func(_ *checkpoint.File, s map[string]any) { s["accumulate_grad_batches"] = -4 },
			wantErr: `"accumulate_grad_batches" is -4`},
		{name: "no accumulation", edit: func(_ *checkpoint.File, s map[string]any) { delete(s, "accumulate_grad_batches") },
			wantErr: `the trainer state has no "accumulate_grad_batches"`},
		{name: "its Config's accumulation -1", edit: func(_ *checkpoint.File, s map[string]any) { s["config_accumulate_grad_batches"] = -1 },
			wantErr: `"config_accumulate_grad_batches" is -1`},
		{name: "no seed", edit: func(_ *checkpoint.File, s map[string]any) { delete(s, "seed") },
			wantErr: `the trainer state has no "seed"`},
		{name: "no resume point", edit: func(_ *checkpoint.File, s map[string]any) { delete(s, "resume") },
			wantErr: `the trainer state has no "resume"`},
		{name: "resume at batch -2", edit: func(_ *checkpoint.File, s map[string]any) { s["resume"].(map[string]any)["batch"] = -2 },
			wantErr: `"resume" has batch -2`},
		{name: "resume at epoch -1", edit: func(_ *checkpoint.File, s map[string]any) { s["resume"].(map[string]any)["epoch"] = -1 },
			wantErr: `"resume" has epoch -1`},
		// What changed is said: an accumulation its Config did not set.
		{name: "accumulation 2^40", edit: func(_ *checkpoint.File, s map[string]any) { s["accumulate_grad_batches"] = int64(1) << 40 },
			steps: 5, wantWarn: []string{"accumulated 1099511627776 batches per optimizer step", "its Config.AccumulateGradBatches was 2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := base
			if tc.edit != nil {
				path = filepath.Join(t.TempDir(), "edited.ckpt")
				editCheckpoint(t, base, path, tc.edit)
			}
			var said bytes.Buffer
			rcfg := volt.Config{MaxEpochs: 2, AccumulateGradBatches: 2, DisableLoggers: true, DisableModelSummary: true,
				Log: slog.New(slog.NewTextHandler(&said, nil))}
			if tc.accumulate != 0 {
				rcfg.AccumulateGradBatches = tc.accumulate
			}
			counter := &batchCounter{}
			if !tc.noCallback {
				rcfg.Callbacks = []volt.Callback{counter}
			}
			r := testutil.NewTrainer(t, rcfg)
			err := r.Fit(t.Context(), &adamBoring{}, statefulLoaders{resumeData()}, volt.FromCheckpoint(path))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), path) {
					t.Fatalf("Fit error = %v, want one naming %s and saying %q", err, path, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := cmp.Or(tc.steps, 8) // 4 restored + 4 (8 batches, accumulating 2)
			if r.GlobalStep() != want {
				t.Errorf("resumed run ends at step %d, want %d", r.GlobalStep(), want)
			}
			var warnings []string
			for line := range strings.Lines(said.String()) {
				if strings.Contains(line, "level=WARN") {
					warnings = append(warnings, line)
				}
			}
			if len(tc.wantWarn) == 0 {
				if len(warnings) > 0 {
					t.Errorf("warnings for an intact checkpoint:\n%s", strings.Join(warnings, ""))
				}
				if counter.batches != 16 {
					t.Errorf("the callback counted %d batches, want 16 (8 restored)", counter.batches)
				}
				return
			}
			found := 0
			for _, w := range warnings {
				all := true
				for _, want := range tc.wantWarn {
					all = all && strings.Contains(w, want)
				}
				if all {
					found++
					if !strings.Contains(w, path) {
						t.Errorf("the warning does not name the file %s: %s", path, w)
					}
				}
			}
			if found != 1 {
				t.Errorf("%d warnings saying %q, want 1; the trainer said:\n%s", found, tc.wantWarn, said.String())
			}
		})
	}
}

// editCheckpoint writes to dst the checkpoint src with its trainer state
// (and file) changed by edit.
func editCheckpoint(t *testing.T, src, dst string, edit func(f *checkpoint.File, state map[string]any)) {
	t.Helper()
	f, err := checkpoint.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	var state map[string]any
	dec := json.NewDecoder(bytes.NewReader(f.State))
	dec.UseNumber() // the seed is a uint64
	if err := dec.Decode(&state); err != nil {
		t.Fatal(err)
	}
	edit(f, state)
	if f.State, err = json.Marshal(state); err != nil {
		t.Fatal(err)
	}
	if err := checkpoint.Save(dst, f); err != nil {
		t.Fatal(err)
	}
}

// TestLoadModuleRefusesAVoltVersionThatIsNone: LoadModule and
// LoadPredictor refuse a checkpoint whose volt_version is no version, as a
// resumed Fit does, naming the file and what volt writes; a newer or absent
// one loads.
func TestLoadModuleRefusesAVoltVersionThatIsNone(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.ckpt")
	tr := testutil.Fit(t, quiet(volt.Config{MaxEpochs: 1}), &adamBoring{}, resumeData())
	if err := tr.SaveCheckpoint(base, false); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		version string
		want    string // "" for no error
	}{
		{"-1", `volt_version "-1" is not a version (MAJOR.MINOR.PATCH, as this volt writes "` + volt.Version + `")`},
		{"null", `volt_version "null" is not a version`},
		{"99.0.0", ""},
		{"", ""},
	} {
		path := filepath.Join(t.TempDir(), "edited.ckpt")
		editCheckpoint(t, base, path, func(f *checkpoint.File, _ map[string]any) { f.VoltVersion = tc.version })
		_, errModule := volt.LoadModule(path, &adamBoring{})
		_, errPredictor := volt.LoadPredictor(path, &adamBoring{})
		for name, err := range map[string]error{"LoadModule": errModule, "LoadPredictor": errPredictor} {
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("volt_version %q: %s: %v", tc.version, name, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path)):
				t.Errorf("volt_version %q: %s error = %v, want one naming %s and saying %q", tc.version, name, err, path, tc.want)
			}
		}
	}
}
