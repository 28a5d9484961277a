package volt_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"maps"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/logger"
)

// indexStream is a stream of n regression examples, example i a function
// of i alone (y = x·w + 0.5, 8 features), counting the examples it yields.
type indexStream struct {
	n       int
	next    int // the position of the pass in progress
	loaded  int // where the next pass starts
	yielded int
}

// streamExample returns example i of an indexStream.
func streamExample(i int) data.Example {
	w := []float32{1, -2, 0.5, 3, 0, -1, 2, 0.25}
	x := make([]float32, len(w))
	y := float32(0.5)
	h := uint64(i)*0x9e3779b97f4a7c15 + 1
	for j := range x {
		h ^= h >> 29
		h *= 0xbf58476d1ce4e5b9
		x[j] = float32(int64(h>>40)%2001-1000) / 500
		y += x[j] * w[j]
	}
	return data.Example{Inputs: []data.Field{{Value: x}}, Labels: []data.Field{{Value: []float32{y}}}}
}

// Iter implements data.IterableDataset: examples loaded … n-1.
func (d *indexStream) Iter(int) iter.Seq2[data.Example, error] {
	return func(yield func(data.Example, error) bool) {
		d.next, d.loaded = d.loaded, 0
		for d.next < d.n {
			i := d.next
			d.next++
			d.yielded++
			if !yield(streamExample(i), nil) {
				return
			}
		}
	}
}

// statefulStream is an indexStream that declares its position.
type statefulStream struct{ indexStream }

// State implements data.StatefulIterable: the next example's index.
func (d *statefulStream) State() ([]byte, error) {
	return binary.LittleEndian.AppendUint64(nil, uint64(d.next)), nil
}

// LoadState implements data.StatefulIterable.
func (d *statefulStream) LoadState(state []byte) error {
	if len(state) != 8 {
		return errors.New("statefulStream: the state is not 8 bytes")
	}
	d.loaded = int(binary.LittleEndian.Uint64(state))
	return nil
}

// firstBatchClock records how long after its creation the run reached its
// first training batch.
type firstBatchClock struct {
	start time.Time
	took  time.Duration
}

func (c *firstBatchClock) OnTrainBatchStart(*volt.Trainer, *data.Batch, int) error {
	if c.took == 0 {
		c.took = time.Since(c.start)
	}
	return nil
}

// streamRun is an uninterrupted Fit over a stream that saved a checkpoint
// after training batch atBatch, and a new trainer's Fit resumed from it.
type streamRun struct {
	u, r          *volt.Trainer
	full, resumed *memLogger
	sv            *saver
	resumedData   *indexStream // the resumed run's stream
	clock         *firstBatchClock
	log           string // the resumed run's log
}

// fitStreamAndResume runs a Fit over a fresh stream (newStream) to the end,
// saving after batch atBatch, and resumes a new trainer from that file.
func fitStreamAndResume(t *testing.T, cfg volt.Config, newStream func() (data.IterableDataset, *indexStream), bs int, atBatch int64) streamRun {
	t.Helper()
	cfg.DisableLoggers = false
	path := filepath.Join(t.TempDir(), "stream.ckpt")
	p := streamRun{full: &memLogger{}, resumed: &memLogger{}}
	p.sv = &saver{path: path, atBatch: atBatch, when: "batch", mem: p.full}
	cfg.Loggers, cfg.Callbacks = []logger.Logger{p.full}, []volt.Callback{p.sv}
	var err error
	if p.u, err = volt.NewTrainer(cfg); err != nil {
		t.Fatal(err)
	}
	ds, _ := newStream()
	if err := p.u.Fit(t.Context(), &boring{}, volt.Loaders{Train: &data.DataLoader{Iterable: ds, BatchSize: bs}}); err != nil {
		t.Fatal(err)
	}
	if !p.sv.saved {
		t.Fatal("the checkpoint was not saved")
	}
	var logs bytes.Buffer
	p.clock = &firstBatchClock{}
	cfg.Loggers, cfg.Callbacks = []logger.Logger{p.resumed}, []volt.Callback{p.clock}
	cfg.Log = slog.New(slog.NewTextHandler(&logs, nil))
	if p.r, err = volt.NewTrainer(cfg); err != nil {
		t.Fatal(err)
	}
	ds, p.resumedData = newStream()
	p.clock.start = time.Now()
	if err := p.r.Fit(t.Context(), &boring{}, volt.Loaders{Train: &data.DataLoader{Iterable: ds, BatchSize: bs}}, volt.FromCheckpoint(path)); err != nil {
		t.Fatal(err)
	}
	p.log = logs.String()
	return p
}

// checkSameRun fails t unless the resumed run ends with the uninterrupted
// run's weights, bit for bit, and logs its rows after the save point.
func checkSameRun(t *testing.T, p streamRun) {
	t.Helper()
	if p.r.GlobalStep() != p.u.GlobalStep() || p.r.CurrentEpoch() != p.u.CurrentEpoch() {
		t.Errorf("resumed run ends at step %d epoch %d, uninterrupted at %d, %d", p.r.GlobalStep(), p.r.CurrentEpoch(), p.u.GlobalStep(), p.u.CurrentEpoch())
	}
	if !equalWeights(weights(t, p.u), weights(t, p.r)) {
		t.Error("the resumed run's weights differ from the uninterrupted run's")
	}
	if !maps.Equal(p.u.LoggedMetrics(), p.r.LoggedMetrics()) {
		t.Errorf("logged metrics differ:\n uninterrupted %v\n resumed       %v", p.u.LoggedMetrics(), p.r.LoggedMetrics())
	}
	rest, steps := p.full.rows[p.sv.mark:], p.full.steps[p.sv.mark:]
	if len(rest) > 0 && steps[0] == p.sv.step-1 && len(rest) > len(p.resumed.rows) {
		rest, steps = rest[1:], steps[1:]
	}
	if len(p.resumed.rows) == 0 || !reflect.DeepEqual(rest, p.resumed.rows) || !reflect.DeepEqual(steps, p.resumed.steps) {
		t.Errorf("rows differ after the save point:\n uninterrupted %v %v\n resumed       %v %v", steps, rest, p.resumed.steps, p.resumed.rows)
	}
}

// TestMillionExampleStreamResumesAtOnce: a stateful stream of 10⁶ examples
// checkpointed after 95 of its 100 batches resumes reading only the last
// 5 batches' examples, and the run ends as the uninterrupted one did (same
// weights bit for bit, same rows).
func TestMillionExampleStreamResumesAtOnce(t *testing.T) {
	const n, bs, at = 1_000_000, 10_000, 95
	if testing.Short() {
		t.Skip("trains on 10⁶ examples twice")
	}
	newStream := func() (data.IterableDataset, *indexStream) {
		s := &statefulStream{indexStream{n: n}}
		return s, &s.indexStream
	}
	p := fitStreamAndResume(t, quiet(volt.Config{MaxEpochs: 1, LogEveryNSteps: 10}), newStream, bs, at)
	checkSameRun(t, p)
	if want := n - at*bs; p.resumedData.yielded != want {
		t.Errorf("the resumed run read %d examples of the stream, want the %d after the checkpoint", p.resumedData.yielded, want)
	}
	if strings.Contains(p.log, "reads and discards") {
		t.Errorf("a stateful stream's resume said it replays:\n%s", p.log)
	}
	t.Logf("resumed after batch %d of %d (%d examples): the resumed Fit reached its first batch %v after it started", at, n/bs, at*bs, p.clock.took)
}

// TestStreamResume: a stateful stream resumes where it stopped, in the
// epoch of the checkpoint and the epochs after it; a stream without State
// replays the batches before the resume point and says so once; both end
// as the uninterrupted run.
func TestStreamResume(t *testing.T) {
	const n, bs = 250, 25 // 10 batches an epoch
	for _, tc := range []struct {
		name     string
		stateful bool
		atBatch  int64
		wantRead int
	}{
		{"stateful, first epoch", true, 4, 2*n - 4*bs},
		{"stateful, second epoch", true, 17, n - 7*bs},
		{"replayed, first epoch", false, 4, 2 * n},
		{"replayed, second epoch", false, 17, n},
	} {
		t.Run(tc.name, func(t *testing.T) {
			newStream := func() (data.IterableDataset, *indexStream) {
				if tc.stateful {
					s := &statefulStream{indexStream{n: n}}
					return s, &s.indexStream
				}
				s := &indexStream{n: n}
				return s, s
			}
			p := fitStreamAndResume(t, quiet(volt.Config{MaxEpochs: 2, LogEveryNSteps: 3}), newStream, bs, tc.atBatch)
			checkSameRun(t, p)
			if p.resumedData.yielded != tc.wantRead {
				t.Errorf("the resumed run read %d examples, want %d", p.resumedData.yielded, tc.wantRead)
			}
			said := strings.Count(p.log, "reads and discards")
			if want := map[bool]int{true: 0, false: 1}[tc.stateful]; said != want {
				t.Errorf("the replay was said %d times, want %d:\n%s", said, want, p.log)
			}
			if !tc.stateful && !strings.Contains(p.log, fmt.Sprintf("%T is not a data.StatefulIterable", &indexStream{})) {
				t.Errorf("the replay message does not name the dataset:\n%s", p.log)
			}
		})
	}
}
