package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/voltml/volt/checkpoint"
)

// inspect writes a description of the checkpoint at path to w. It returns
// an error when the checkpoint cannot be read; on a checksum mismatch it
// still describes the file, then returns the mismatch.
func inspect(path string, w io.Writer) error {
	h, err := checkpoint.ReadHeader(path)
	if err != nil {
		return err
	}
	_, verifyErr := checkpoint.Verify(path)
	if verifyErr != nil && !errors.Is(verifyErr, checkpoint.ErrChecksum) {
		return verifyErr
	}
	status := "verified OK"
	if verifyErr != nil {
		status = "MISMATCH (file corrupted?)"
	}
	version := h.VoltVersion()
	if version == "" {
		version = "(unknown)"
	}
	fmt.Fprintf(w, "checkpoint:    %s\n", path)
	fmt.Fprintf(w, "format:        %s, version %d\n", checkpoint.Format, h.FormatVersion())
	fmt.Fprintf(w, "volt version:  %s\n", version)
	fmt.Fprintf(w, "checksum:      %s (%s)\n", status, h.Checksum())
	if err := writeState(w, h.State()); err != nil {
		return err
	}
	if err := writeTensors(w, h.Tensors); err != nil {
		return err
	}
	return verifyErr
}
