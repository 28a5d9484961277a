package classifier

import (
	"fmt"
	"math/rand/v2"

	"github.com/voltml/volt/data"
)

// The vocabulary of the temporal-order task: Distractors noise symbols
// (tokens 0 … Distractors−1), then the two marks X and Y.
const (
	Distractors       = 4
	X           int32 = Distractors
	Y           int32 = Distractors + 1
	// Vocab is the number of distinct tokens.
	Vocab = Distractors + 2
)

// Task is the temporal-order problem of Hochreiter and Schmidhuber's LSTM
// paper (1997, experiment 6), scaled down: a sequence of Length random
// noise symbols in which Marks positions, chosen at random, hold X or Y.
// The class is the order of the marks read as a binary number, X = 0 and
// Y = 1, the first mark the most significant bit: 2^Marks classes (XYY is
// class 3 of 8). Nothing but the marks and their order tells the classes
// apart, so a classifier reading the sequence left to right must remember
// each mark it has seen until the end.
type Task struct {
	Length int // tokens per sequence, >= Marks
	Marks  int // marked positions, 1 to 10
}

// Validate reports a task that cannot be generated.
func (t Task) Validate() error {
	if t.Marks < 1 || t.Marks > 10 || t.Length < t.Marks {
		return fmt.Errorf("classifier: Task %+v: Marks must be in [1, 10] and Length >= Marks", t)
	}
	return nil
}

// Classes is the number of classes, 2^Marks.
func (t Task) Classes() int { return 1 << t.Marks }

// Generate returns n sequences drawn from a PCG generator seeded with seed:
// input 0 the tokens (int32, shape [Length]), label 0 the class (an int32
// scalar). The same arguments give the same examples.
func (t Task) Generate(n int, seed uint64) (data.Slice, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("classifier: Generate: n must be >= 0, got %d", n)
	}
	r := rand.New(rand.NewPCG(seed, 0x7e3b))
	out := make(data.Slice, n)
	marked := make([]bool, t.Length)
	for i := range out {
		tokens := make([]int32, t.Length)
		for j := range tokens {
			tokens[j] = int32(r.IntN(Distractors))
		}
		clear(marked)
		for range t.Marks {
			p := r.IntN(t.Length)
			for marked[p] {
				p = r.IntN(t.Length)
			}
			marked[p] = true
		}
		class := int32(0)
		for j, m := range marked {
			if m {
				bit := int32(r.IntN(2))
				tokens[j] = X + bit
				class = class<<1 | bit
			}
		}
		out[i] = data.Example{
			Inputs: []data.Field{{Value: tokens, Shape: []int{t.Length}}},
			Labels: []data.Field{{Value: class}},
		}
	}
	return out, nil
}

// ClassOf returns the class of tokens, or an error when they are not a
// sequence of the task (a token out of the vocabulary, another length or
// number of marks).
func (t Task) ClassOf(tokens []int32) (int, error) {
	if len(tokens) != t.Length {
		return 0, fmt.Errorf("classifier: ClassOf: %d tokens, the task's sequences have %d", len(tokens), t.Length)
	}
	class, marks := 0, 0
	for i, tok := range tokens {
		switch {
		case tok < 0 || tok >= Vocab:
			return 0, fmt.Errorf("classifier: ClassOf: token %d at %d is not in [0, %d)", tok, i, Vocab)
		case tok >= X:
			class, marks = class<<1|int(tok-X), marks+1
		}
	}
	if marks != t.Marks {
		return 0, fmt.Errorf("classifier: ClassOf: %d marks, the task has %d", marks, t.Marks)
	}
	return class, nil
}
