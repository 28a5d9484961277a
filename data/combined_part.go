package data

// Part locates one loader's batch inside a batch combined by a
// CombinedLoader.
type Part struct {
	// Name is the loader's name (CombinedLoader.Names, or its index).
	Name string
	// Loader is the loader's index in CombinedLoader.Loaders.
	Loader int
	// NumInputs is how many of Batch.Inputs belong to this part: they are
	// consecutive, after those of the previous parts.
	NumInputs int
	// NumLabels is how many of Batch.Labels belong to this part: they are
	// consecutive, after those of the previous parts.
	NumLabels int
	// Size is the part's batch size.
	Size int
}

// Split returns one Batch per part of a combined batch, in part order, each
// with its own Inputs, Labels (sub-slices of b's) and Size. For an ordinary
// batch (nil Parts) it returns []*Batch{b}.
func (b *Batch) Split() []*Batch {
	if b.Parts == nil {
		return []*Batch{b}
	}
	out := make([]*Batch, len(b.Parts))
	in, lab := 0, 0
	for i, p := range b.Parts {
		out[i] = &Batch{
			Inputs: b.Inputs[in : in+p.NumInputs : in+p.NumInputs],
			Labels: b.Labels[lab : lab+p.NumLabels : lab+p.NumLabels],
			Size:   p.Size,
		}
		in += p.NumInputs
		lab += p.NumLabels
	}
	return out
}

// Part returns the batch of the part with the given name, or nil when b has
// no such part (an ordinary batch, or a MaxSize batch whose loader was
// exhausted).
func (b *Batch) Part(name string) *Batch {
	for i, p := range b.Parts {
		if p.Name == name {
			return b.Split()[i]
		}
	}
	return nil
}

// combine builds the combined batch of one step from the parts' batches
// (batches[i] is loader idx[i]'s batch, named names[i]); Size is the first
// part's.
func combine(idx []int, names []string, batches []*Batch) *Batch {
	out := &Batch{Size: batches[0].Size, Parts: make([]Part, len(batches))}
	for i, b := range batches {
		out.Inputs = append(out.Inputs, b.Inputs...)
		out.Labels = append(out.Labels, b.Labels...)
		out.Parts[i] = Part{
			Name:      names[i],
			Loader:    idx[i],
			NumInputs: len(b.Inputs),
			NumLabels: len(b.Labels),
			Size:      b.Size,
		}
	}
	return out
}
