package checkpoint

import (
	"encoding/json"
	"strconv"

	"github.com/gomlx/compute/dtypes"
)

// Metadata keys and values written by Save.
const (
	// Format is the value of the "format" metadata key.
	Format = "volt-checkpoint"
	// FormatVersion is the format version this package writes and the newest
	// it reads.
	FormatVersion = 1

	keyFormat        = "format"
	keyFormatVersion = "format_version"
	keyVoltVersion   = "volt_version"
	keyState         = "state"
	keyChecksum      = "checksum"
)

// TensorInfo describes one tensor of a checkpoint without its data.
type TensorInfo struct {
	Name  string
	DType dtypes.DType
	Shape []int
	// Offsets are the [begin, end) byte offsets of the tensor's data,
	// relative to the start of the data section.
	Offsets [2]int64
}

// NumElements returns the number of values of the tensor.
func (ti TensorInfo) NumElements() int64 {
	n, _ := numElements(ti.Shape)
	return n
}

// ByteSize returns the number of data bytes of the tensor.
func (ti TensorInfo) ByteSize() int64 { return ti.Offsets[1] - ti.Offsets[0] }

// Header is the parsed header of a checkpoint.
type Header struct {
	// Tensors are sorted by their data offsets.
	Tensors []TensorInfo
	// Metadata is the "__metadata__" object, including "checksum".
	Metadata map[string]string
	// DataStart is the file offset of the data section (8 + header length).
	DataStart int64
	// DataSize is the length of the data section.
	DataSize int64
}

// VoltVersion returns the version of volt that wrote the checkpoint.
func (h *Header) VoltVersion() string { return h.Metadata[keyVoltVersion] }

// FormatVersion returns the checkpoint's format version.
func (h *Header) FormatVersion() int {
	v, _ := strconv.Atoi(h.Metadata[keyFormatVersion])
	return v
}

// State returns the trainer state stored in the checkpoint.
func (h *Header) State() json.RawMessage { return json.RawMessage(h.Metadata[keyState]) }

// Checksum returns the stored checksum, "sha256:<hex>".
func (h *Header) Checksum() string { return h.Metadata[keyChecksum] }
