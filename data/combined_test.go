package data

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
)

// rangeLoader returns a DataLoader over the numbered examples base..base+n-1
// in batches of 2.
func rangeLoader(base, n int) *DataLoader {
	s := make(Slice, n)
	for i := range s {
		s[i] = numberedExample(base + i)
	}
	return &DataLoader{Dataset: s, BatchSize: 2}
}

// streamLoader returns a DataLoader of unknown length over a streamDataset
// of n examples (0..n-1 in epoch 0), in batches of 2.
func streamLoader(n int) *DataLoader {
	return &DataLoader{Iterable: &streamDataset{n: n, failAt: -1}, BatchSize: 2}
}

// loadersAB returns loader "a" (examples 0..4: 3 batches) and loader "b"
// (examples 100..109: 5 batches).
func loadersAB() []Loader { return []Loader{rangeLoader(0, 5), rangeLoader(100, 10)} }

// describe renders a batch as "size=S name[labels] ..." (combined) or
// "idx:[labels]" (ordinary), checking that every part's inputs match its
// labels (numbered examples: input [i, i+0.5] for label i).
func describe(t *testing.T, b *Batch) string {
	t.Helper()
	if b.Parts == nil {
		checkInputs(t, b)
		return fmt.Sprintf("%d:%v", b.DataloaderIdx, labelsOf(t, b))
	}
	if len(b.Parts) > 0 && b.Size != b.Parts[0].Size {
		t.Errorf("Size = %d, want the first part's Size %d", b.Size, b.Parts[0].Size)
	}
	parts := []string{fmt.Sprintf("size=%d", b.Size)}
	for i, pb := range b.Split() {
		checkInputs(t, pb)
		if got := pb.Part(b.Parts[i].Name); got != nil {
			t.Errorf("Split()[%d].Part(%q) = %v, want nil for an ordinary batch", i, b.Parts[i].Name, got)
		}
		if got := b.Part(b.Parts[i].Name); got == nil || !reflect.DeepEqual(got, pb) {
			t.Errorf("Part(%q) = %v, want Split()[%d] = %v", b.Parts[i].Name, got, i, pb)
		}
		parts = append(parts, fmt.Sprintf("%s%v", b.Parts[i].Name, labelsOf(t, pb)))
	}
	return strings.Join(parts, " ")
}

// checkInputs checks that a numbered batch's inputs are [i, i+0.5] for each label i.
func checkInputs(t *testing.T, b *Batch) {
	t.Helper()
	if len(b.Inputs) != 1 || len(b.Labels) != 1 {
		t.Fatalf("batch has %d inputs and %d labels, want 1 and 1", len(b.Inputs), len(b.Labels))
	}
	in := tensors.MustCopyFlatData[float32](b.Inputs[0])
	for j, l := range labelsOf(t, b) {
		if in[2*j] != float32(l) || in[2*j+1] != float32(l)+0.5 {
			t.Errorf("example %d: inputs %v do not match label %d", j, in[2*j:2*j+2], l)
		}
	}
	if got := b.Inputs[0].Shape().Dimensions[0]; got != b.Size {
		t.Errorf("Size = %d, inputs have %d examples", b.Size, got)
	}
}

// describeAll collects one epoch of l and describes every batch.
func describeAll(t *testing.T, l Loader, epoch, skip int) []string {
	t.Helper()
	var out []string
	for _, b := range collectAll(t, l, epoch, skip) {
		out = append(out, describe(t, b))
	}
	return out
}

func TestCombinedModes(t *testing.T) {
	tests := []struct {
		mode  CombineMode
		names []string
		swap  bool // loaders in order b, a
		want  []string
	}{
		{MaxSizeCycle, []string{"a", "b"}, false, []string{
			"size=2 a[0 1] b[100 101]", "size=2 a[2 3] b[102 103]", "size=1 a[4] b[104 105]",
			"size=2 a[0 1] b[106 107]", "size=2 a[2 3] b[108 109]"}},
		{"", nil, false, []string{ // default: MaxSizeCycle, names "0", "1"
			"size=2 0[0 1] 1[100 101]", "size=2 0[2 3] 1[102 103]", "size=1 0[4] 1[104 105]",
			"size=2 0[0 1] 1[106 107]", "size=2 0[2 3] 1[108 109]"}},
		{MaxSize, []string{"a", "b"}, false, []string{
			"size=2 a[0 1] b[100 101]", "size=2 a[2 3] b[102 103]", "size=1 a[4] b[104 105]",
			"size=2 b[106 107]", "size=2 b[108 109]"}},
		{MaxSize, []string{"b", "a"}, true, []string{
			"size=2 b[100 101] a[0 1]", "size=2 b[102 103] a[2 3]", "size=2 b[104 105] a[4]",
			"size=2 b[106 107]", "size=2 b[108 109]"}},
		{MinSize, []string{"a", "b"}, false, []string{
			"size=2 a[0 1] b[100 101]", "size=2 a[2 3] b[102 103]", "size=1 a[4] b[104 105]"}},
		{Sequential, []string{"a", "b"}, false, []string{
			"0:[0 1]", "0:[2 3]", "0:[4]", "1:[100 101]", "1:[102 103]", "1:[104 105]", "1:[106 107]", "1:[108 109]"}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/%v", tc.mode, tc.names), func(t *testing.T) {
			loaders := loadersAB()
			if tc.swap {
				loaders[0], loaders[1] = loaders[1], loaders[0]
			}
			c := &CombinedLoader{Loaders: loaders, Names: tc.names, Mode: tc.mode}
			got := describeAll(t, c, 0, 0)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("batches:\n got %q\nwant %q", got, tc.want)
			}
			if n := c.NumBatches(); n != len(tc.want) {
				t.Errorf("NumBatches() = %d, want %d", n, len(tc.want))
			}
		})
	}
}

func TestCombinedParts(t *testing.T) {
	c := &CombinedLoader{Loaders: loadersAB(), Names: []string{"a", "b"}, Mode: MaxSize}
	batches := collectAll(t, c, 0, 0)
	want := [][]Part{
		{{Name: "a", Loader: 0, NumInputs: 1, NumLabels: 1, Size: 1}, {Name: "b", Loader: 1, NumInputs: 1, NumLabels: 1, Size: 2}},
		{{Name: "b", Loader: 1, NumInputs: 1, NumLabels: 1, Size: 2}},
	}
	for i, b := range []*Batch{batches[2], batches[3]} {
		if !reflect.DeepEqual(b.Parts, want[i]) {
			t.Errorf("batch %d Parts = %+v, want %+v", i+2, b.Parts, want[i])
		}
		if len(b.Inputs) != len(want[i]) || len(b.Labels) != len(want[i]) {
			t.Errorf("batch %d has %d inputs and %d labels, want %d each", i+2, len(b.Inputs), len(b.Labels), len(want[i]))
		}
	}
	if p := batches[3].Part("a"); p != nil {
		t.Errorf("Part(\"a\") of an exhausted loader = %v, want nil", p)
	}
	plain := &Batch{Size: 3}
	if got := plain.Split(); len(got) != 1 || got[0] != plain {
		t.Errorf("Split() of an ordinary batch = %v, want the batch itself", got)
	}
}

func TestCombinedNumBatches(t *testing.T) {
	tests := []struct {
		name    string
		loaders []Loader
		mode    CombineMode
		want    int
	}{
		{"max_size_cycle 3,5", loadersAB(), MaxSizeCycle, 5},
		{"default 3,5", loadersAB(), "", 5},
		{"max_size 3,5", loadersAB(), MaxSize, 5},
		{"min_size 3,5", loadersAB(), MinSize, 3},
		{"sequential 3,5", loadersAB(), Sequential, 8},
		{"max_size_cycle iterable", []Loader{rangeLoader(0, 5), streamLoader(4)}, MaxSizeCycle, -1},
		{"max_size iterable", []Loader{rangeLoader(0, 5), streamLoader(4)}, MaxSize, -1},
		{"min_size iterable", []Loader{rangeLoader(0, 5), streamLoader(4)}, MinSize, -1},
		{"sequential iterable", []Loader{streamLoader(4), rangeLoader(0, 5)}, Sequential, -1},
		{"single", []Loader{rangeLoader(0, 5)}, MinSize, 3},
		{"no loaders", nil, MaxSize, 0},
		{"nil loader", []Loader{rangeLoader(0, 5), nil}, MaxSize, 0},
		{"unknown mode", loadersAB(), "zip", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &CombinedLoader{Loaders: tc.loaders, Mode: tc.mode}
			if got := c.NumBatches(); got != tc.want {
				t.Errorf("NumBatches() = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestCombinedSkip(t *testing.T) {
	seed := uint64(7)
	shuffled := func(base, n int) *DataLoader {
		l := rangeLoader(base, n)
		l.Shuffle, l.Seed, l.Workers = true, &seed, 2
		return l
	}
	tests := []struct {
		name    string
		loaders func() []Loader
	}{
		{"shuffled 3,5", func() []Loader { return []Loader{shuffled(0, 5), shuffled(100, 10)} }},
		{"shuffled 5,3", func() []Loader { return []Loader{shuffled(100, 10), shuffled(0, 5)} }},
		{"iterable 3, map 5", func() []Loader { return []Loader{streamLoader(5), rangeLoader(100, 10)} }},
		{"map 3, iterable 2, map 1", func() []Loader {
			return []Loader{rangeLoader(100, 5), streamLoader(4), rangeLoader(200, 1)}
		}},
	}
	for _, tc := range tests {
		for _, mode := range combineModes {
			c := &CombinedLoader{Loaders: tc.loaders(), Mode: mode}
			if c.Validate() != nil { // max_size_cycle with an iterable
				continue
			}
			t.Run(fmt.Sprintf("%s/%s", tc.name, mode), func(t *testing.T) {
				for _, epoch := range []int{0, 3} {
					full := describeAll(t, c, epoch, 0)
					for skip := 0; skip <= len(full)+1; skip++ {
						got := describeAll(t, c, epoch, skip)
						want := full[min(skip, len(full)):]
						if len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
							t.Errorf("epoch %d skip %d:\n got %q\nwant %q", epoch, skip, got, want)
						}
					}
				}
			})
		}
	}
}

func TestCombinedSkipBuildsNoSkippedBatches(t *testing.T) {
	newCounting := func(base, n int) *countingDataset {
		return &countingDataset{Slice: rangeLoader(base, n).Dataset.(Slice), failAt: -1}
	}
	tests := []struct {
		mode  CombineMode
		skip  int
		wantA int64 // Get calls on a (5 examples, 3 batches)
		wantB int64 // Get calls on b (10 examples, 5 batches)
	}{
		{MaxSizeCycle, 4, 2, 2}, // a restarts at its batch 1: [2 3]; b yields [108 109]
		{MaxSize, 3, 0, 4},      // a is exhausted; b yields its batches 3 and 4
		{MinSize, 2, 1, 2},      // a yields [4]; b yields [104 105]
		{Sequential, 6, 0, 4},   // b yields its batches 3 and 4
	}
	for _, tc := range tests {
		t.Run(string(tc.mode), func(t *testing.T) {
			a, b := newCounting(0, 5), newCounting(100, 10)
			c := &CombinedLoader{Mode: tc.mode, Loaders: []Loader{
				&DataLoader{Dataset: a, BatchSize: 2}, &DataLoader{Dataset: b, BatchSize: 2}}}
			collectAll(t, c, 0, tc.skip)
			if ga, gb := a.gets.Load(), b.gets.Load(); ga != tc.wantA || gb != tc.wantB {
				t.Errorf("Get calls: a %d, b %d; want a %d, b %d", ga, gb, tc.wantA, tc.wantB)
			}
		})
	}
}
