package volt

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/voltml/volt/checkpoint"
	"github.com/voltml/volt/dist"
	"github.com/voltml/volt/internal/engine"
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
	// Logging holds the members of the rank's logging part, as its save
	// writes them for rank 0 (logging_part.go): the same record, so a rank
	// resumes exactly as rank 0 does.
	Logging map[string]json.RawMessage
	// StreamState is the rank's training stream position (resumePoint's).
	StreamState []byte
	Tensors     []checkpoint.Tensor
}

// streamStateMember holds a rank's StreamState beside its logging members
// in the trainer state's "rank_metrics".
const streamStateMember = "stream_state"

// ownMetrics captures this rank's accumulators: its logging part's save.
func (t *Trainer) ownMetrics() (*rankMetrics, error) {
	st := t.newStateDoc("")
	if err := t.logs.save(st); err != nil {
		return nil, err
	}
	m := &rankMetrics{Logging: st.members}
	for _, name := range slices.Sorted(maps.Keys(st.tensors)) {
		ct, err := checkpoint.FromGoMLX(name, st.tensors[name])
		if err != nil {
			return nil, fmt.Errorf("metric state %s: %w", name, err)
		}
		m.Tensors = append(m.Tensors, ct)
	}
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
	ranks := make([]map[string]json.RawMessage, 0, len(all)-1)
	for _, m := range all[1:] {
		members := maps.Clone(m.Logging)
		if members == nil {
			members = map[string]json.RawMessage{}
		}
		if len(m.StreamState) > 0 {
			b, err := json.Marshal(m.StreamState)
			if err != nil {
				return err
			}
			members[streamStateMember] = b
		}
		ranks = append(ranks, members)
	}
	raw, err := json.Marshal(ranks)
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
		Ranks []map[string]json.RawMessage `json:"rank_metrics"`
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
		members := saved.Ranks[rank-1]
		var stream []byte
		if raw, ok := members[streamStateMember]; ok {
			if err := json.Unmarshal(raw, &stream); err != nil {
				return fmt.Errorf("checkpoint %s: decoding rank %d's stream position: %w", path, rank, err)
			}
		}
		for _, member := range t.logs.members() {
			if raw, ok := members[member]; ok {
				st.members[member] = raw
			} else {
				delete(st.members, member)
			}
		}
		return editResumePoint(st, func(r *resumePoint) { r.StreamState = stream })
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
