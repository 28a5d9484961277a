package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// WriteFile loads the runs named by args (see ResolveDirs) and writes
// their report to path, atomically. opts.Skipped is filled in from the
// directories left out.
func WriteFile(path string, args []string, opts Options) (*Result, []*Run, error) {
	runs, skipped, err := Load(args)
	if err != nil {
		return nil, nil, err
	}
	opts.Skipped = append(opts.Skipped, skipped...)
	var buf bytes.Buffer
	res, err := Render(&buf, runs, opts)
	if err != nil {
		return nil, nil, err
	}
	if err := writeAtomic(path, buf.Bytes()); err != nil {
		return nil, nil, err
	}
	return res, runs, nil
}

// writeAtomic writes data to path through a temporary file in the same
// directory, so a reader never sees half a page.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	return nil
}
