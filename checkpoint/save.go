package checkpoint

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Save writes f to path atomically: it writes a temporary file in the same
// directory (".<base>.<random>.tmp"), fsyncs it, renames it over path and
// fsyncs the directory. On any error the temporary file is removed and the
// previous file at path, if any, is untouched. (The one exception is a
// failure to fsync the directory after the rename: the new file is then in
// place but its rename may not yet be durable, and Save reports the error.)
//
// Save refuses tensors with empty, reserved or duplicate names, unsupported
// dtypes, and Data whose length does not match the shape, and a State that
// is not valid JSON.
func Save(path string, f *File) error {
	content, err := prepare(f)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if err := writeAtomic(path, content); err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return nil
}

// prepared is a validated checkpoint ready to be written: the bytes before
// the data section, and the tensors in data order.
type prepared struct {
	head    []byte // 8-byte length + padded header
	tensors []*Tensor
}

// prepare validates f and builds its header.
func prepare(f *File) (*prepared, error) {
	if f == nil {
		return nil, fmt.Errorf("nothing to save: the *File is nil")
	}
	state, err := compactState(f.State)
	if err != nil {
		return nil, err
	}
	if !utf8.ValidString(f.VoltVersion) {
		return nil, fmt.Errorf("VoltVersion %q is not valid UTF-8", f.VoltVersion)
	}
	sorted := make([]*Tensor, len(f.Tensors))
	for i := range f.Tensors {
		if err := f.Tensors[i].validate(); err != nil {
			return nil, err
		}
		sorted[i] = &f.Tensors[i]
	}
	slices.SortFunc(sorted, func(a, b *Tensor) int { return compareStrings(a.Name, b.Name) })
	infos := make([]TensorInfo, len(sorted))
	var offset int64
	for i, t := range sorted {
		if i > 0 && sorted[i-1].Name == t.Name {
			return nil, fmt.Errorf("two tensors are named %q; names must be unique", t.Name)
		}
		end := offset + int64(len(t.Data))
		infos[i] = TensorInfo{Name: t.Name, DType: t.DType, Shape: t.Shape, Offsets: [2]int64{offset, end}}
		offset = end
	}
	metadata := map[string]string{
		keyFormat:        Format,
		keyFormatVersion: strconv.Itoa(FormatVersion),
		keyVoltVersion:   f.VoltVersion,
		keyState:         state,
	}
	sum := newChecksum(infos, metadata)
	for _, t := range sorted {
		sum.Write(t.Data)
	}
	metadata[keyChecksum] = formatChecksum(sum)

	header := encodeHeader(infos, metadata)
	if pad := len(header) % 8; pad != 0 {
		header = append(header, bytes.Repeat([]byte{' '}, 8-pad)...)
	}
	head := binary.LittleEndian.AppendUint64(make([]byte, 0, 8+len(header)), uint64(len(header)))
	return &prepared{head: append(head, header...), tensors: sorted}, nil
}

// compactState validates the trainer state and returns it compacted.
func compactState(state json.RawMessage) (string, error) {
	if len(bytes.TrimSpace(state)) == 0 {
		return "{}", nil
	}
	if !utf8.Valid(state) {
		return "", fmt.Errorf("State is not valid UTF-8")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, state); err != nil {
		return "", fmt.Errorf("State is not valid JSON: %w", err)
	}
	return buf.String(), nil
}

// writeTo writes the whole checkpoint to w.
func (p *prepared) writeTo(w io.Writer) error {
	if _, err := w.Write(p.head); err != nil {
		return err
	}
	for _, t := range p.tensors {
		if _, err := w.Write(t.Data); err != nil {
			return fmt.Errorf("writing tensor %q: %w", t.Name, err)
		}
	}
	return nil
}
