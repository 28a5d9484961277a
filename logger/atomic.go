package logger

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// writeFileAtomic writes path by calling write on a temporary file in the
// same directory, syncing it and renaming it over path, so readers and
// crashes never observe a half-written file. Errors name path.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("logger: write %s: %w", path, err)
	}
	tmp := f.Name()
	if err := fillAndClose(f, write); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("logger: write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("logger: write %s: %w", path, err)
	}
	return nil
}

// fillAndClose runs write on a buffered f, makes f world-readable like a
// file created by os.Create, syncs it to stable storage and closes it.
func fillAndClose(f *os.File, write func(io.Writer) error) error {
	bw := bufio.NewWriter(f)
	err := write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}
