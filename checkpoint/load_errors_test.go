package checkpoint

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corrupt returns a copy of the sample checkpoint modified by edit.
func corrupt(t *testing.T, edit func(raw []byte) []byte) string {
	t.Helper()
	path := saveSample(t)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, edit(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadErrors(t *testing.T) {
	f32 := map[string]any{"dtype": "F32", "shape": []int{1}, "data_offsets": []int{0, 4}}
	tests := []struct {
		name     string
		path     func(t *testing.T) string
		sentinel error
		want     string // substring after "checkpoint <path>"
	}{
		{"missing", func(t *testing.T) string { return filepath.Join(t.TempDir(), "nope.ckpt") },
			fs.ErrNotExist, ": no such file"},
		{"directory", func(t *testing.T) string { return t.TempDir() },
			ErrNotCheckpoint, " is not a volt checkpoint: it is a directory"},
		{"empty file", func(t *testing.T) string { return corrupt(t, func(b []byte) []byte { return nil }) },
			ErrTruncated, ": truncated: the file is 0 bytes, shorter than the 8-byte header length prefix"},
		{"truncated header", func(t *testing.T) string { return corrupt(t, func(b []byte) []byte { return b[:40] }) },
			ErrTruncated, ": truncated: the header length is"},
		{"truncated data", func(t *testing.T) string { return corrupt(t, func(b []byte) []byte { return b[:len(b)-3] }) },
			ErrTruncated, ": truncated: the tensor data ends at byte 48 of the data section but the file holds only 45 data bytes"},
		{"trailing bytes", func(t *testing.T) string { return corrupt(t, func(b []byte) []byte { return append(b, 0, 0) }) },
			ErrInvalid, ": invalid: 2 unexpected bytes after the tensor data"},
		{"text file", func(t *testing.T) string {
			return corrupt(t, func([]byte) []byte { return []byte("hello, this is not a checkpoint\n") })
		}, ErrNotCheckpoint, " is not a volt checkpoint: the header length prefix"},
		{"bad header JSON", func(t *testing.T) string {
			return corrupt(t, func(b []byte) []byte { b[9] = '!'; return b })
		}, ErrNotCheckpoint, " is not a volt checkpoint: the header is not a valid safetensors JSON object"},
		{"plain safetensors", func(t *testing.T) string {
			return writeRaw(t, map[string]any{"w": f32}, f32Bytes(1))
		}, ErrNotCheckpoint, ` is not a volt checkpoint: the header has no "__metadata__" (a plain safetensors file?)`},
		{"no format key", func(t *testing.T) string {
			return writeRaw(t, map[string]any{"w": f32, "__metadata__": map[string]string{"x": "y"}}, f32Bytes(1))
		}, ErrNotCheckpoint, ` is not a volt checkpoint: "__metadata__" has no "format" key`},
		{"other format", func(t *testing.T) string {
			return writeRaw(t, map[string]any{"__metadata__": voltMeta("format", "pt")}, nil)
		}, ErrNotCheckpoint, ` is not a volt checkpoint: format is "pt", want "volt-checkpoint"`},
		{"newer version", func(t *testing.T) string {
			return writeRaw(t, map[string]any{"w": f32, "__metadata__": voltMeta("format_version", "2")}, f32Bytes(1))
		}, ErrUnsupportedVersion, ": format version 2 is newer than this volt supports (1); upgrade volt to read it"},
		{"bad version", func(t *testing.T) string {
			return writeRaw(t, map[string]any{"__metadata__": voltMeta("format_version", "one")}, nil)
		}, ErrInvalid, `: invalid header: format_version "one" is not a positive integer`},
		{"no checksum", func(t *testing.T) string {
			return writeRaw(t, map[string]any{"__metadata__": voltMeta("checksum", "<delete>")}, nil)
		}, ErrInvalid, `: invalid header: checksum "" is not "sha256:" followed by 64 hex digits`},
		{"unknown dtype", func(t *testing.T) string {
			return writeRaw(t, map[string]any{"w": map[string]any{"dtype": "F8_E5M2", "shape": []int{1}, "data_offsets": []int{0, 1}},
				"__metadata__": voltMeta()}, []byte{1})
		}, ErrInvalid, `: invalid header: tensor "w": dtype "F8_E5M2" is not supported (valid: F64, F32`},
		{"offsets mismatch shape", func(t *testing.T) string {
			return writeRaw(t, map[string]any{"w": map[string]any{"dtype": "F32", "shape": []int{2}, "data_offsets": []int{0, 4}},
				"__metadata__": voltMeta()}, f32Bytes(1))
		}, ErrInvalid, `: invalid header: tensor "w": data_offsets [0 4] span 4 bytes but shape [2] of F32 needs 2 × 4 bytes`},
		{"gap", func(t *testing.T) string {
			return writeRaw(t, map[string]any{"w": map[string]any{"dtype": "F32", "shape": []int{1}, "data_offsets": []int{4, 8}},
				"__metadata__": voltMeta()}, f32Bytes(1, 2))
		}, ErrInvalid, `: invalid header: tensor "w" starts at data byte 4, but the previous tensor ends at 0 (tensors must be contiguous)`},
		{"missing field", func(t *testing.T) string {
			return writeRaw(t, map[string]any{"w": map[string]any{"dtype": "F32", "shape": []int{1}},
				"__metadata__": voltMeta()}, f32Bytes(1))
		}, ErrInvalid, `: invalid header: tensor "w": needs "dtype", "shape" and "data_offsets"`},
		{"flipped data byte", func(t *testing.T) string {
			return corrupt(t, func(b []byte) []byte { b[len(b)-1] ^= 1; return b })
		}, ErrChecksum, ": checksum mismatch (file corrupted?): the header records sha256:"},
		{"edited metadata", func(t *testing.T) string {
			return corrupt(t, func(b []byte) []byte {
				return []byte(strings.Replace(string(b), `"0.1.0-test"`, `"0.1.0-tesT"`, 1))
			})
		}, ErrChecksum, ": checksum mismatch (file corrupted?)"},
		{"renamed tensor", func(t *testing.T) string {
			return corrupt(t, func(b []byte) []byte {
				return []byte(strings.Replace(string(b), `"mask"`, `"masq"`, 1))
			})
		}, ErrChecksum, ": checksum mismatch (file corrupted?)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.path(t)
			for _, load := range []struct {
				name string
				fn   func(string) error
			}{
				{"Load", func(p string) error { _, err := Load(p); return err }},
				{"Verify", func(p string) error { _, err := Verify(p); return err }},
			} {
				err := load.fn(path)
				if err == nil {
					t.Fatalf("%s succeeded, want an error", load.name)
				}
				if want := "checkpoint " + path + tt.want; !strings.HasPrefix(err.Error(), want) {
					t.Errorf("%s error:\n  %s\nwant prefix:\n  %s", load.name, err, want)
				}
				if !errors.Is(err, tt.sentinel) {
					t.Errorf("%s error %q does not wrap %v", load.name, err, tt.sentinel)
				}
			}
		})
	}
}

func TestReadHeaderSkipsData(t *testing.T) {
	path := corrupt(t, func(b []byte) []byte { b[len(b)-1] ^= 1; return b })
	h, err := ReadHeader(path)
	if err != nil {
		t.Fatalf("ReadHeader: %v (it should not verify the data)", err)
	}
	if h.VoltVersion() != "0.1.0-test" || h.FormatVersion() != 1 || len(h.Tensors) != 4 || h.DataSize != 48 {
		t.Errorf("header = %+v", h)
	}
	if !strings.HasPrefix(h.Checksum(), "sha256:") {
		t.Errorf("Checksum() = %q", h.Checksum())
	}
	if got := string(h.State()); !strings.Contains(got, `"global_step":120`) {
		t.Errorf("State() = %s", got)
	}
	if w := h.Tensors[2]; w.Name != "layer1/weights" || w.NumElements() != 6 || w.ByteSize() != 24 {
		t.Errorf("Tensors[2] = %+v", w)
	}
	if _, err := ReadHeader(filepath.Join(t.TempDir(), "x")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadHeader of a missing file: %v, want fs.ErrNotExist", err)
	}
}
