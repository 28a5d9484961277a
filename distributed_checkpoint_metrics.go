package volt

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/voltml/volt/checkpoint"
	"github.com/voltml/volt/dist"
	"github.com/voltml/volt/internal/engine"
	"github.com/voltml/volt/internal/jsonfloat"
)

// Each rank's epoch accumulators in a checkpoint: rank 0 writes the file,
// but the ranks' logged values and metric objects accumulate their own
// shards, so a mid-epoch checkpoint holding only rank 0's would resume
// every rank with rank 0's partial epoch. The other ranks send theirs to
// rank 0, which stores rank r's logged-value state as the trainer state's
// "rank_metrics"[r-1] and its metric objects' tensors under
// rankMetricPrefix + "r/"; a rank resuming a job of the same size takes
// its own back (rank 0 keeps the usual fields).

// rankMetricPrefix prefixes the metric-object tensors of ranks 1…N-1.
const rankMetricPrefix = engine.Prefix + "rank_metric_state/"

// rankMetrics is one rank's epoch accumulators.
type rankMetrics struct {
	TrainMetrics    []metricState              `json:"train_metrics,omitempty"`
	CallbackMetrics map[string]jsonfloat.Float `json:"callback_metrics,omitempty"`
	LoggedMetrics   map[string]jsonfloat.Float `json:"logged_metrics,omitempty"`
	ProgBarMetrics  map[string]jsonfloat.Float `json:"progress_bar_metrics,omitempty"`
	// StreamState is the rank's training stream position (resumePoint's).
	StreamState []byte              `json:"stream_state,omitempty"`
	Tensors     []checkpoint.Tensor `json:"-"`
}

// ownMetrics captures this rank's accumulators, as snapshot saves them.
func (t *Trainer) ownMetrics() (*rankMetrics, error) {
	if err := t.logs.trainRes.computeMetrics(t.logs.trainMetrics); err != nil {
		return nil, err
	}
	m := &rankMetrics{CallbackMetrics: toJSONFloats(t.logs.callbackMetrics), LoggedMetrics: toJSONFloats(t.logs.loggedMetrics), ProgBarMetrics: toJSONFloats(t.logs.progressBarMetrics)}
	for _, e := range t.logs.trainRes.order {
		m.TrainMetrics = append(m.TrainMetrics, metricState{
			Key: e.key, OnStep: e.opts.onStep, OnEpoch: e.opts.onEpoch, ProgBar: e.opts.progBar,
			Logger: e.opts.logger, Reduce: e.opts.reduce, Seen: e.seen,
			Step: jsonfloat.Float(e.step), Sum: jsonfloat.Float(e.sum), Weight: jsonfloat.Float(e.weight), Min: jsonfloat.Float(e.min), Max: jsonfloat.Float(e.max),
		})
	}
	var f checkpoint.File
	if err := t.appendMetricState(&f); err != nil {
		return nil, err
	}
	m.Tensors = f.Tensors
	if r := t.fitLoopPart().resumePointNow(); r != nil {
		m.StreamState = r.StreamState
	}
	return m, nil
}

// gatherRankMetrics sends every rank's accumulators to rank 0 (nil
// elsewhere; element 0 is unused). Every rank must call it.
func (t *Trainer) gatherRankMetrics() ([]*rankMetrics, error) {
	g := t.ddp.group
	var own []byte
	var ownErr error // sent as nothing: every rank still takes part
	if g.Rank() != 0 {
		var buf bytes.Buffer
		m, err := t.ownMetrics()
		if err == nil {
			err = gob.NewEncoder(&buf).Encode(m)
		}
		own, ownErr = buf.Bytes(), err
	}
	var all []*rankMetrics
	if g.Rank() == 0 {
		all = make([]*rankMetrics, g.Size())
	}
	for r := 1; r < g.Size(); r++ {
		got, err := dist.BroadcastBytes(g, own, r)
		if err != nil {
			return nil, fmt.Errorf("gathering rank %d's metric accumulators: %w", r, err)
		}
		if all != nil {
			all[r] = &rankMetrics{}
			if err := gob.NewDecoder(bytes.NewReader(got)).Decode(all[r]); err != nil && ownErr == nil {
				ownErr = fmt.Errorf("rank %d's metric accumulators did not arrive: %w", r, err)
			}
		}
	}
	if ownErr != nil {
		return nil, fmt.Errorf("saving each rank's metric accumulators: %w", ownErr)
	}
	return all, nil
}

// addRankMetrics stores ranks 1…N-1's accumulators in rank 0's file.
func addRankMetrics(f *checkpoint.File, all []*rankMetrics) error {
	var state map[string]json.RawMessage
	if err := json.Unmarshal(f.State, &state); err != nil {
		return err
	}
	raw, err := json.Marshal(all[1:])
	if err != nil {
		return err
	}
	state["rank_metrics"] = raw
	if f.State, err = json.Marshal(state); err != nil {
		return err
	}
	for r, m := range all[1:] {
		for _, ct := range m.Tensors {
			ct.Name = fmt.Sprintf("%s%d/%s", rankMetricPrefix, r+1, strings.TrimPrefix(ct.Name, metricStatePrefix))
			f.Tensors = append(f.Tensors, ct)
		}
	}
	return nil
}

// takeRankMetrics gives this rank its own accumulators from a checkpoint
// (rank 0's stay in st and f for rank 0, a single process, a checkpoint
// without them or of a job of another size, which volt says) and drops
// the other ranks' tensors from f.
func (t *Trainer) takeRankMetrics(path string, f *checkpoint.File, st *stateDoc) error {
	rank := t.ddp.group.Rank()
	var saved struct {
		Ranks []rankMetrics `json:"rank_metrics"`
	}
	if err := json.Unmarshal(f.State, &saved); err != nil {
		return fmt.Errorf("checkpoint %s: decoding the ranks' metric accumulators: %w", path, err)
	}
	mine := rank > 0 && rank <= len(saved.Ranks) && len(saved.Ranks)+1 == t.ddp.group.Size()
	if len(saved.Ranks) > 0 && len(saved.Ranks)+1 != t.ddp.group.Size() {
		t.sayOnce("rank-metrics-size", fmt.Sprintf("volt: checkpoint %s holds the epoch accumulators of %d ranks, this job has %d: every rank resumes the epoch's logged values with rank 0's",
			path, len(saved.Ranks)+1, t.ddp.group.Size()))
	}
	own := fmt.Sprintf("%s%d/", rankMetricPrefix, rank)
	kept := f.Tensors[:0]
	for _, ct := range f.Tensors {
		switch {
		case mine && strings.HasPrefix(ct.Name, metricStatePrefix):
			continue // rank 0's
		case mine && strings.HasPrefix(ct.Name, own):
			ct.Name = metricStatePrefix + strings.TrimPrefix(ct.Name, own)
		case strings.HasPrefix(ct.Name, rankMetricPrefix):
			continue
		}
		kept = append(kept, ct)
	}
	f.Tensors = kept
	if mine {
		m := saved.Ranks[rank-1]
		for _, v := range []struct {
			member string
			value  any
		}{{"train_metrics", m.TrainMetrics}, {"callback_metrics", m.CallbackMetrics}, {"logged_metrics", m.LoggedMetrics}, {"progress_bar_metrics", m.ProgBarMetrics}} {
			if err := st.putNonEmpty(v.member, v.value); err != nil {
				return err
			}
		}
		return editResumePoint(st, func(r *resumePoint) { r.StreamState = m.StreamState })
	}
	if len(saved.Ranks)+1 != t.ddp.group.Size() {
		// A position in another job's split.
		return editResumePoint(st, func(r *resumePoint) { r.StreamState = nil })
	}
	return nil
}

// editResumePoint applies edit to the resume point of st, if it has one.
func editResumePoint(st *stateDoc, edit func(r *resumePoint)) error {
	var r *resumePoint
	if _, err := st.get("resume", &r); err != nil || r == nil {
		return err
	}
	edit(r)
	return st.put("resume", r)
}
