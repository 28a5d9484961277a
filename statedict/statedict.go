package statedict

import (
	"fmt"
	"slices"

	"github.com/gomlx/gomlx/core/tensors"
)

// StateDict is a PyTorch state_dict: tensors by key, in the order the file
// (or the model) gave them.
type StateDict struct {
	// Path is the file it was read from, for messages ("" when built in Go).
	Path string

	keys    []string
	tensors map[string]*tensors.Tensor
}

// New returns an empty state dict; Set adds to it.
func New() *StateDict { return &StateDict{tensors: map[string]*tensors.Tensor{}} }

// Keys returns the keys in order.
func (sd *StateDict) Keys() []string { return slices.Clone(sd.keys) }

// Len returns the number of tensors.
func (sd *StateDict) Len() int { return len(sd.keys) }

// Get returns the tensor under key, or nil.
func (sd *StateDict) Get(key string) *tensors.Tensor { return sd.tensors[key] }

// Set puts t under key, after the existing keys when it is new.
func (sd *StateDict) Set(key string, t *tensors.Tensor) {
	if sd.tensors == nil {
		sd.tensors = map[string]*tensors.Tensor{}
	}
	if _, ok := sd.tensors[key]; !ok {
		sd.keys = append(sd.keys, key)
	}
	sd.tensors[key] = t
}

// Delete removes key, if present.
func (sd *StateDict) Delete(key string) {
	if _, ok := sd.tensors[key]; !ok {
		return
	}
	delete(sd.tensors, key)
	sd.keys = slices.DeleteFunc(sd.keys, func(k string) bool { return k == key })
}

// where names the state dict in messages: its file, or "state dict".
func (sd *StateDict) where() string {
	if sd.Path == "" {
		return "state dict"
	}
	return sd.Path
}

// String summarises sd: its file and number of tensors.
func (sd *StateDict) String() string {
	return fmt.Sprintf("%s (%d tensors)", sd.where(), sd.Len())
}
