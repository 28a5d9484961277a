package volt

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"strings"

	"github.com/voltml/volt/checkpoint"

	"github.com/voltml/volt/dist"
	"github.com/voltml/volt/logger"
)

// rankLogger stands in for the loggers on the ranks other than 0: it
// records nothing (only rank 0 logs, as Lightning's rank_zero_only) but
// reports rank 0's log directory, so that every rank agrees on where
// checkpoints go.
type rankLogger struct{ dir string }

func (rankLogger) LogMetrics(map[string]float64, int64) error { return nil }
func (rankLogger) LogHyperparams(map[string]any) error        { return nil }
func (rankLogger) Save() error                                { return nil }
func (rankLogger) Finalize(string) error                      { return nil }

// LogDir returns rank 0's log directory.
func (l rankLogger) LogDir() string { return l.dir }

// rankZeroLoggers keeps the loggers on rank 0; the other ranks get a
// rankLogger with rank 0's directory, or none when rank 0 has none.
func (t *Trainer) rankZeroLoggers() error {
	var msg []byte
	if t.ddp.group.Rank() == 0 && len(t.logs.loggers) > 0 {
		msg = []byte("L" + t.logDir())
	}
	got, err := dist.BroadcastBytes(t.ddp.group, msg, 0)
	if err != nil {
		return fmt.Errorf("sharing rank 0's log directory: %w", err)
	}
	if t.ddp.group.Rank() == 0 {
		return nil
	}
	t.logs.loggers = nil
	if len(got) > 0 {
		t.logs.loggers = []logger.Logger{rankLogger{dir: string(got[1:])}}
	}
	return nil
}

// saveCheckpointOnRankZero is SaveCheckpoint in a data-parallel job: rank 0
// writes the file (the weights are the same on every rank; the other
// ranks' metric accumulators are sent to it, see rankMetrics), then shares
// the outcome; the other ranks return only once the file is complete, so
// none reads a half-written file, and every rank records rank 0's path as
// its last checkpoint. Every rank must call it at the same point.
func (t *Trainer) saveCheckpointOnRankZero(path string, weightsOnly bool) error {
	var all []*rankMetrics
	var gatherErr error
	if !weightsOnly {
		all, gatherErr = t.gatherRankMetrics()
	}
	var msg []byte
	if t.ddp.group.Rank() == 0 {
		msg = []byte("ok " + path)
		f, err := t.snapshot(weightsOnly)
		if err == nil && gatherErr != nil {
			err = gatherErr
		}
		if err == nil && all != nil {
			err = addRankMetrics(f, all)
		}
		if err == nil {
			err = checkpoint.Save(path, f)
		}
		if err != nil {
			msg = []byte("error " + err.Error())
		}
	}
	got, err := dist.BroadcastBytes(t.ddp.group, msg, 0)
	if err != nil {
		return fmt.Errorf("volt: SaveCheckpoint %s: sharing rank 0's result: %w", path, err)
	}
	if rest, failed := strings.CutPrefix(string(got), "error "); failed {
		return fmt.Errorf("volt: SaveCheckpoint %s: rank 0 could not save: %s", path, rest)
	}
	t.ckpt.lastCheckpoint = strings.TrimPrefix(string(got), "ok ")
	return nil
}

// BroadcastFromRankZero replaces *v on every rank by rank 0's value (a
// gob-encodable value; a no-op in a single process), for callbacks whose
// decisions must be rank 0's: ModelCheckpoint's file names and top-k
// choices. Every rank must call it at the same point.
func (t *Trainer) BroadcastFromRankZero(v any) error {
	if !t.ddp.on {
		return nil
	}
	var buf bytes.Buffer
	if t.ddp.group.Rank() == 0 {
		if err := gob.NewEncoder(&buf).Encode(v); err != nil {
			return fmt.Errorf("volt: BroadcastFromRankZero: %w", err)
		}
	}
	got, err := dist.BroadcastBytes(t.ddp.group, buf.Bytes(), 0)
	if err != nil {
		return fmt.Errorf("volt: BroadcastFromRankZero: %w", err)
	}
	if t.ddp.group.Rank() == 0 {
		return nil
	}
	if err := gob.NewDecoder(bytes.NewReader(got)).Decode(v); err != nil {
		return fmt.Errorf("volt: BroadcastFromRankZero: decoding rank 0's %T: %w", v, err)
	}
	return nil
}

// barrierBeforeLoad makes every rank wait before reading a checkpoint
// until every rank got there (rank 0's writes before this point are
// complete).
func (t *Trainer) barrierBeforeLoad() error {
	if !t.ddp.on {
		return nil
	}
	if err := t.ddp.group.Barrier(); err != nil {
		return fmt.Errorf("volt: waiting for every rank before loading a checkpoint: %w", err)
	}
	return nil
}
