package statedict

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// Read reads the PyTorch state_dict in the file at path, whose format it
// tells from the file's first bytes: a safetensors file (Hugging Face's
// model.safetensors, or one Save wrote), or a torch.save file (.pt, .pth,
// .bin, .ckpt: the zip archive PyTorch writes since 1.6, or the older
// pickle stream), read in Go, without Python. A torch.save file must
// hold a dict of tensors (model.state_dict()), or a checkpoint dict with
// one under "state_dict" (Lightning's .ckpt) or "model_state_dict".
func Read(path string) (*StateDict, error) {
	format, err := sniff(path)
	if err != nil {
		return nil, fmt.Errorf("statedict.Read: %w", err)
	}
	var sd *StateDict
	switch format {
	case formatSafetensors:
		sd, err = readSafetensors(path)
	default:
		sd, err = readTorch(path, format)
	}
	if err != nil {
		return nil, fmt.Errorf("statedict.Read: %w", err)
	}
	return sd, nil
}

type fileFormat int

const (
	formatSafetensors fileFormat = iota
	formatTorchZip
	formatTorchLegacy
)

// sniff tells a file's format from its first bytes, or says what it is not.
func sniff(path string) (fileFormat, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	head := make([]byte, 9)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	head = head[:n]
	switch {
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		return formatTorchZip, nil
	case len(head) > 0 && head[0] == 0x80: // a pickle protocol opcode: torch.save's legacy format
		return formatTorchLegacy, nil
	case len(head) == 9 && head[8] == '{' && binary.LittleEndian.Uint64(head) < 1<<30:
		return formatSafetensors, nil
	}
	return 0, fmt.Errorf("%s is neither a safetensors file nor a torch.save file (a zip archive or a pickle): its first bytes are %q", path, head)
}
