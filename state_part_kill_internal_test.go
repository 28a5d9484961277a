package volt

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/voltml/volt/checkpoint"
	"github.com/voltml/volt/data"
)

// toyPart is a resumable part added in one place, as a new part of the
// trainer would be: its key, save and load. Its state is the number of
// training batches it has seen (it is also a callback counting them).
type toyPart struct{ batches int }

func (*toyPart) stateKey() string { return "toy_batches" }

func (p *toyPart) save(st *stateDoc) error { return st.put("toy_batches", p.batches) }

func (p *toyPart) load(st *stateDoc) error {
	_, err := st.get("toy_batches", &p.batches)
	return err
}

func (p *toyPart) OnTrainBatchEnd(*Trainer, *StepOutput, *data.Batch, int) error {
	p.batches++
	return nil
}

// toyStop saves last.ckpt in dir after every training batch; after batch
// stopAt it says so in the file ready and waits to be killed.
type toyStop struct {
	dir    string
	stopAt int64
}

func (s *toyStop) OnTrainBatchEnd(t *Trainer, _ *StepOutput, _ *data.Batch, _ int) error {
	if err := t.SaveCheckpoint(filepath.Join(s.dir, "last.ckpt"), false); err != nil {
		return err
	}
	if t.Progress().TrainBatch.Total.Processed == s.stopAt {
		if err := os.WriteFile(filepath.Join(s.dir, "ready"), nil, 0o644); err != nil {
			return err
		}
		time.Sleep(time.Minute) // until the SIGKILL
	}
	return nil
}

// toyConfig is the configuration of the toy part's runs, on the fake
// engine (fake_engine_test.go): 4 epochs of 4 batches, the toy part first
// among the callbacks (it has counted a batch when the batch's checkpoint
// is taken).
func toyConfig(toy *toyPart, log *bytes.Buffer, callbacks ...Callback) Config {
	cfg := Config{MaxEpochs: 4, Callbacks: append([]Callback{toy}, callbacks...), DisableLoggers: true, DisableCheckpointing: true,
		DisableModelSummary: true, EnableProgressBar: Ptr(false), Log: slog.New(slog.DiscardHandler)}
	if log != nil {
		cfg.Log = slog.New(slog.NewTextHandler(log, nil))
	}
	return cfg
}

// newToyTrainer returns a trainer on the fake engine whose state parts
// include toy (nil: none): the one place the part is added.
func newToyTrainer(t *testing.T, cfg Config, toy *toyPart) *Trainer {
	t.Helper()
	tr, err := NewTrainer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr.cfg.fakeSteps = &fakeSteps{}
	if toy != nil {
		tr.cfg.moreParts = []statePart{toy}
	}
	return tr
}

// toyFit runs Fit of tr on 8 examples in batches of 2.
func toyFit(ctx context.Context, tr *Trainer, opts ...RunOption) error {
	examples := make(data.Slice, 8)
	for i := range examples {
		examples[i] = data.Example{Inputs: []data.Field{{Value: []float32{float32(i)}}}, Labels: []data.Field{{Value: []float32{1}}}}
	}
	return tr.Fit(ctx, untraced{}, Loaders{Train: &data.DataLoader{Dataset: examples, BatchSize: 2}}, opts...)
}

// TestToyPartSurvivesSIGKILL: a part added to the trainer's parts, and
// nowhere else, has its state in every checkpoint and back in a Fit
// resumed from it in another process, after the process that saved it was
// killed with SIGKILL; the resumed run ends with the count of a run that
// never stopped. A trainer without the part says the checkpoint has a
// part it does not know.
func TestToyPartSurvivesSIGKILL(t *testing.T) {
	const stopAt = 6
	if dir := os.Getenv("VOLT_TOY_PART_CHILD"); dir != "" {
		toy := &toyPart{}
		tr := newToyTrainer(t, toyConfig(toy, nil, &toyStop{dir: dir, stopAt: stopAt}), toy)
		err := toyFit(context.Background(), tr)
		t.Fatalf("the child ran to its end (%v) instead of waiting to be killed", err)
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestToyPartSurvivesSIGKILL$")
	cmd.Env = append(os.Environ(), "VOLT_TOY_PART_CHILD="+dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the child never reached batch %d:\n%s", stopAt, out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("the child was not killed: %v\n%s", err, out.String())
	}
	path := filepath.Join(dir, "last.ckpt")

	// The part's state is in the checkpoint, under its key.
	if got := readToyState(t, path)["toy_batches"]; string(got) != strconv.Itoa(stopAt) {
		t.Fatalf("the checkpoint's toy_batches is %s, want %d", got, stopAt)
	}

	// A Fit resumed in this process gives the part its state back.
	toy, seen := &toyPart{}, -1
	var said bytes.Buffer
	peek := &batchStartPeek{fn: func() {
		if seen < 0 {
			seen = toy.batches
		}
	}}
	tr := newToyTrainer(t, toyConfig(toy, &said, peek), toy)
	if err := toyFit(t.Context(), tr, FromCheckpoint(path)); err != nil {
		t.Fatal(err)
	}
	if seen != stopAt {
		t.Errorf("the resumed run's toy part had %d batches at its first batch, want %d (the checkpoint's)", seen, stopAt)
	}
	whole := &toyPart{}
	u := newToyTrainer(t, toyConfig(whole, nil), whole)
	if err := toyFit(t.Context(), u); err != nil {
		t.Fatal(err)
	}
	if toy.batches != whole.batches || whole.batches != 16 {
		t.Errorf("the resumed run's toy part counted %d batches, the uninterrupted run's %d, want 16", toy.batches, whole.batches)
	}
	if strings.Contains(said.String(), "level=WARN") {
		t.Errorf("resuming with the part said:\n%s", said.String())
	}

	// Without the part, its state is a part this trainer does not know.
	said.Reset()
	plain := newToyTrainer(t, toyConfig(&toyPart{}, &said), nil)
	if err := toyFit(t.Context(), plain, FromCheckpoint(path)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(said.String(), "parts this volt does not know") || !strings.Contains(said.String(), "toy_batches") {
		t.Errorf("resuming without the part said:\n%s\nwant a warning naming toy_batches", said.String())
	}
}

// batchStartPeek calls fn at every training batch start.
type batchStartPeek struct{ fn func() }

func (p *batchStartPeek) OnTrainBatchStart(*Trainer, *data.Batch, int) error {
	p.fn()
	return nil
}

// readToyState returns the members of the trainer state of the checkpoint
// at path.
func readToyState(t *testing.T, path string) map[string]json.RawMessage {
	t.Helper()
	f, err := checkpoint.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(f.State, &members); err != nil {
		t.Fatal(err)
	}
	return members
}
