package checkpoint

import "encoding/json"

// File is the content of a checkpoint.
type File struct {
	// VoltVersion is the version of volt writing the file, stored as
	// "volt_version".
	VoltVersion string
	// State is the trainer's state, opaque to this package. It must be valid
	// JSON; Save stores it compacted, and an empty State as "{}".
	State json.RawMessage
	// Tensors are the arrays; Save stores them sorted by name, and Load
	// returns them in that order.
	Tensors []Tensor
}

// Tensor returns the tensor called name, or nil.
func (f *File) Tensor(name string) *Tensor {
	for i := range f.Tensors {
		if f.Tensors[i].Name == name {
			return &f.Tensors[i]
		}
	}
	return nil
}
