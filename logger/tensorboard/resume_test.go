package tensorboard

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/voltml/volt/logger"
)

// TestResumedRunContinuesTheEventFile: a run marks its event file at a
// checkpoint (after step 2), writes steps 3 and 4 to disk and dies; the
// logger of the resumed run, given the mark, cuts that file back to the
// mark and appends to it. Read back with the independent decoder, the
// directory holds one event file, with every step once and a readable
// record sequence (the cut falls between records).
func TestResumedRunContinuesTheEventFile(t *testing.T) {
	root := t.TempDir()
	killed, _ := newTestLogger(t, Config{SaveDir: root, FlushEvery: 1000})
	must(t, killed.LogHyperparams(map[string]any{"lr": 0.1}))
	var mark logger.Position
	for step := range int64(5) {
		must(t, killed.LogMetrics(map[string]float64{"loss": float64(step)}, step))
		if step == 2 {
			var err error
			if mark, err = killed.Mark(); err != nil {
				t.Fatal(err)
			}
		}
	}
	must(t, killed.Save()) // steps 3 and 4 reached the disk before the kill

	resumed, _ := newTestLogger(t, Config{SaveDir: root, FlushEvery: 1000})
	if ok, err := resumed.Resume(mark); !ok || err != nil {
		t.Fatalf("Resume(%+v) = %v, %v; want true", mark, ok, err)
	}
	if resumed.LogDir() != killed.LogDir() {
		t.Fatalf("resumed LogDir() = %s, want %s", resumed.LogDir(), killed.LogDir())
	}
	must(t, resumed.LogHyperparams(map[string]any{"lr": 0.1}))
	for step := int64(3); step <= 5; step++ {
		must(t, resumed.LogMetrics(map[string]float64{"loss": float64(step)}, step))
	}
	must(t, resumed.Finalize(logger.StatusSuccess))

	files, _ := filepath.Glob(filepath.Join(killed.LogDir(), "events.out.tfevents.*"))
	if len(files) != 1 || files[0] != filepath.Join(mark.Dir, mark.File) {
		t.Fatalf("event files %v, want the killed run's %s alone", files, mark.File)
	}
	var steps []int64
	for _, s := range scalars(t, readEvents(t, files[0])) {
		if s.tag != "loss" || s.value != float32(s.step) {
			t.Errorf("scalar %+v, want loss = step", s)
		}
		steps = append(steps, s.step)
	}
	if want := []int64{0, 1, 2, 3, 4, 5}; !slices.Equal(steps, want) {
		t.Errorf("loss steps %v, want %v", steps, want)
	}
	if ends := pluginValues(t, readEvents(t, files[0]), hparamsPluginName)[sessionEndTag]; len(ends) != 1 {
		t.Errorf("%d session ends, want 1 (the resumed run's)", len(ends))
	}
}

// TestMarkBeforeTheFirstEventNamesTheFile: a checkpoint taken before the
// logger wrote anything still names the event file, so that the events a
// killed run wrote after it are dropped when the run resumes.
func TestMarkBeforeTheFirstEventNamesTheFile(t *testing.T) {
	root := t.TempDir()
	killed, _ := newTestLogger(t, Config{SaveDir: root})
	mark, err := killed.Mark()
	must(t, err)
	if mark.File == "" {
		t.Fatalf("Mark before any event = %+v, want it to name the event file", mark)
	}
	must(t, killed.LogMetrics(map[string]float64{"loss": 7}, 7))
	must(t, killed.Save())

	resumed, _ := newTestLogger(t, Config{SaveDir: root})
	if ok, err := resumed.Resume(mark); !ok || err != nil {
		t.Fatalf("Resume = %v, %v", ok, err)
	}
	must(t, resumed.LogMetrics(map[string]float64{"loss": 1}, 1))
	must(t, resumed.Finalize(logger.StatusSuccess))
	files, _ := filepath.Glob(filepath.Join(mark.Dir, "events.out.tfevents.*"))
	var got []scalar
	for _, f := range files {
		got = append(got, scalars(t, readEvents(t, f))...)
	}
	if len(got) != 1 || got[0].step != 1 {
		t.Errorf("scalars %+v in %d files, want the resumed run's step 1 alone", got, len(files))
	}
}
