package checkpoint

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
)

// maxHeaderLen bounds the header length, as the reference safetensors
// implementation does (100 MB).
const maxHeaderLen = 100_000_000

// ReadHeader reads and checks the header of the checkpoint at path without
// reading the tensor data, so it does not verify the checksum (see Verify).
// It checks the volt metadata, the dtypes, shapes and offsets of every
// tensor, and that the file size matches the offsets.
func ReadHeader(path string) (*Header, error) {
	f, h, err := openHeader(path)
	if err != nil {
		return nil, err
	}
	_ = f.Close()
	return h, nil
}

// openHeader opens path, reads and checks its header, and returns the open
// file with the header; the caller closes the file.
func openHeader(path string) (*os.File, *Header, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, &fileError{path: path, rest: ": no such file", err: err}
		}
		return nil, nil, errorf(path, err, "cannot open: %v", err)
	}
	h, err := readHeader(path, f)
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	return f, h, nil
}

// readHeader reads and checks the header of f, named path in errors.
func readHeader(path string, f *os.File) (*Header, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, errorf(path, err, "cannot stat: %v", err)
	}
	if info.IsDir() {
		return nil, notCheckpointf(path, "it is a directory")
	}
	size := info.Size()
	if size < 8 {
		return nil, errorf(path, ErrTruncated, "truncated: the file is %d bytes, shorter than the 8-byte header length prefix", size)
	}
	var prefix [9]byte
	n, err := f.ReadAt(prefix[:], 0)
	if n < 8 {
		return nil, errorf(path, err, "cannot read the header length: %v", err)
	}
	headerLen := binary.LittleEndian.Uint64(prefix[:8])
	startsLikeJSON := n == 9 && prefix[8] == '{'
	switch {
	case headerLen > maxHeaderLen || headerLen < 2:
		return nil, notCheckpointf(path, "the header length prefix %d is implausible (valid: 2 to %d); not a safetensors file", headerLen, maxHeaderLen)
	case n == 9 && !startsLikeJSON:
		return nil, notCheckpointf(path, "the header does not start with '{'; not a safetensors file")
	case int64(headerLen) > size-8:
		return nil, errorf(path, ErrTruncated, "truncated: the header length is %d bytes but only %d bytes follow the 8-byte prefix", headerLen, size-8)
	}
	raw := make([]byte, headerLen)
	if _, err := f.ReadAt(raw, 8); err != nil {
		return nil, errorf(path, err, "cannot read the header: %v", err)
	}
	h, err := parseHeader(path, raw)
	if err != nil {
		return nil, err
	}
	h.DataStart = 8 + int64(headerLen)
	switch have := size - h.DataStart; {
	case have < h.DataSize:
		return nil, errorf(path, ErrTruncated, "truncated: the tensor data ends at byte %d of the data section but the file holds only %d data bytes (file size %d, want %d)",
			h.DataSize, have, size, h.DataStart+h.DataSize)
	case have > h.DataSize:
		return nil, errorf(path, ErrInvalid, "invalid: %d unexpected bytes after the tensor data (file size %d, want %d)",
			have-h.DataSize, size, h.DataStart+h.DataSize)
	}
	return h, nil
}

// parseHeader parses and checks the header JSON.
func parseHeader(path string, raw []byte) (*Header, error) {
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(bytes.TrimRight(raw, " "), &entries); err != nil {
		return nil, notCheckpointf(path, "the header is not a valid safetensors JSON object: %v", err)
	}
	metaRaw, ok := entries[metadataKey]
	if !ok {
		return nil, notCheckpointf(path, "the header has no %q (a plain safetensors file?)", metadataKey)
	}
	var metadata map[string]string
	if err := json.Unmarshal(metaRaw, &metadata); err != nil || metadata == nil {
		return nil, notCheckpointf(path, "%q is not an object of strings", metadataKey)
	}
	if err := checkMetadata(path, metadata); err != nil {
		return nil, err
	}
	h := &Header{Metadata: metadata}
	for name, entry := range entries {
		if name == metadataKey {
			continue
		}
		ti, err := parseTensorInfo(name, entry)
		if err != nil {
			return nil, errorf(path, ErrInvalid, "invalid header: %v", err)
		}
		h.Tensors = append(h.Tensors, ti)
	}
	size, err := checkLayout(h.Tensors)
	if err != nil {
		return nil, errorf(path, ErrInvalid, "invalid header: %v", err)
	}
	h.DataSize = size
	return h, nil
}

// checkMetadata checks the volt keys of the metadata.
func checkMetadata(path string, metadata map[string]string) error {
	format, ok := metadata[keyFormat]
	switch {
	case !ok:
		return notCheckpointf(path, "%q has no %q key (a plain safetensors file?)", metadataKey, keyFormat)
	case format != Format:
		return notCheckpointf(path, "format is %q, want %q", format, Format)
	}
	version, err := strconv.Atoi(metadata[keyFormatVersion])
	switch {
	case err != nil || version < 1:
		return errorf(path, ErrInvalid, "invalid header: format_version %q is not a positive integer", metadata[keyFormatVersion])
	case version > FormatVersion:
		return errorf(path, ErrUnsupportedVersion, "format version %d is newer than this volt supports (%d); upgrade volt to read it", version, FormatVersion)
	}
	sum := metadata[keyChecksum]
	if !strings.HasPrefix(sum, checksumPrefix) || len(sum) != len(checksumPrefix)+64 {
		return errorf(path, ErrInvalid, "invalid header: checksum %q is not \"sha256:\" followed by 64 hex digits", sum)
	}
	return nil
}

// tensorEntry is a tensor's entry in the header JSON.
type tensorEntry struct {
	DType       *string  `json:"dtype"`
	Shape       *[]int   `json:"shape"`
	DataOffsets *[]int64 `json:"data_offsets"`
}

// parseTensorInfo parses and checks one tensor entry.
func parseTensorInfo(name string, raw json.RawMessage) (TensorInfo, error) {
	var e tensorEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		return TensorInfo{}, fmt.Errorf("tensor %q: %v", name, err)
	}
	if e.DType == nil || e.Shape == nil || e.DataOffsets == nil {
		return TensorInfo{}, fmt.Errorf("tensor %q: needs \"dtype\", \"shape\" and \"data_offsets\"", name)
	}
	if name == "" {
		return TensorInfo{}, fmt.Errorf("a tensor has an empty name")
	}
	dtype, err := ParseDType(*e.DType)
	if err != nil {
		return TensorInfo{}, fmt.Errorf("tensor %q: %w", name, err)
	}
	n, err := numElements(*e.Shape)
	if err != nil {
		return TensorInfo{}, fmt.Errorf("tensor %q: %w", name, err)
	}
	offsets := *e.DataOffsets
	if len(offsets) != 2 || offsets[0] < 0 || offsets[1] < offsets[0] {
		return TensorInfo{}, fmt.Errorf("tensor %q: data_offsets %v is not [begin, end] with 0 <= begin <= end", name, offsets)
	}
	size := int64(dtypeSize(dtype))
	if want := offsets[1] - offsets[0]; n > want/size || n*size != want {
		return TensorInfo{}, fmt.Errorf("tensor %q: data_offsets %v span %d bytes but shape %s of %s needs %d × %d bytes",
			name, offsets, want, formatShape(*e.Shape), *e.DType, n, size)
	}
	shape := *e.Shape
	if shape == nil {
		shape = []int{}
	}
	return TensorInfo{Name: name, DType: dtype, Shape: shape, Offsets: [2]int64{offsets[0], offsets[1]}}, nil
}

// checkLayout sorts infos by offset, checks that they tile the data section
// without gaps or overlaps, and returns its size.
func checkLayout(infos []TensorInfo) (int64, error) {
	slices.SortFunc(infos, func(a, b TensorInfo) int {
		if c := a.Offsets[0] - b.Offsets[0]; c != 0 {
			return int(max(-1, min(1, c)))
		}
		if c := a.Offsets[1] - b.Offsets[1]; c != 0 {
			return int(max(-1, min(1, c)))
		}
		return compareStrings(a.Name, b.Name)
	})
	var end int64
	for _, ti := range infos {
		if ti.Offsets[0] != end {
			return 0, fmt.Errorf("tensor %q starts at data byte %d, but the previous tensor ends at %d (tensors must be contiguous)",
				ti.Name, ti.Offsets[0], end)
		}
		end = ti.Offsets[1]
	}
	return end, nil
}
