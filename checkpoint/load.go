package checkpoint

import (
	"encoding/json"
	"errors"
	"hash"
	"io"
)

// Load reads the checkpoint at path and verifies its structure and checksum.
// Its errors name path and wrap fs.ErrNotExist (missing file), ErrTruncated,
// ErrNotCheckpoint, ErrUnsupportedVersion, ErrInvalid or ErrChecksum. The
// tensors are returned in data order (by name for files written by Save);
// their Data share one buffer.
func Load(path string) (*File, error) {
	f, h, err := openHeader(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data := make([]byte, h.DataSize)
	if _, err := f.ReadAt(data, h.DataStart); err != nil {
		return nil, readDataError(path, err)
	}
	sum := newChecksum(h.Tensors, h.Metadata)
	sum.Write(data)
	if err := checkSum(path, h, sum); err != nil {
		return nil, err
	}
	out := &File{VoltVersion: h.VoltVersion(), Tensors: make([]Tensor, len(h.Tensors))}
	if state := h.Metadata[keyState]; state != "" {
		out.State = json.RawMessage(state)
	}
	for i, ti := range h.Tensors {
		b, e := ti.Offsets[0], ti.Offsets[1]
		out.Tensors[i] = Tensor{Name: ti.Name, DType: ti.DType, Shape: ti.Shape, Data: data[b:e:e]}
	}
	return out, nil
}

// Verify checks the structure and checksum of the checkpoint at path,
// streaming the data instead of holding it, and returns its header. Its
// errors are those of Load.
func Verify(path string) (*Header, error) {
	f, h, err := openHeader(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sum := newChecksum(h.Tensors, h.Metadata)
	n, err := io.Copy(sum, io.NewSectionReader(f, h.DataStart, h.DataSize))
	if err == nil && n < h.DataSize {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, readDataError(path, err)
	}
	if err := checkSum(path, h, sum); err != nil {
		return nil, err
	}
	return h, nil
}

// checkSum compares the computed checksum with the stored one.
func checkSum(path string, h *Header, sum hash.Hash) error {
	if got := formatChecksum(sum); got != h.Checksum() {
		return errorf(path, ErrChecksum, "checksum mismatch (file corrupted?): the header records %s but the content hashes to %s",
			h.Checksum(), got)
	}
	return nil
}

// readDataError reports a failure to read the data section; a short read
// means the file shrank since its size was checked.
func readDataError(path string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errorf(path, ErrTruncated, "truncated: the file ended while reading the tensor data")
	}
	return errorf(path, err, "cannot read the tensor data: %v", err)
}
