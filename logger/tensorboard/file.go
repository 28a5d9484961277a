package tensorboard

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

// fileCounter numbers the event files this process creates, like the
// global counter of torch.utils.tensorboard's EventFileWriter.
var fileCounter atomic.Int64

// eventFileName returns events.out.tfevents.<unix time>.<host>.<pid>.<n>,
// TensorBoard's event file naming, with the time zero-padded to 10 digits.
func eventFileName(t time.Time, host string, pid int, n int64) string {
	return fmt.Sprintf("events.out.tfevents.%010d.%s.%d.%d", t.Unix(), host, pid, n)
}

// hostname returns the machine's host name, or "localhost" when unknown.
func hostname() string {
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "localhost"
}

// eventFile is one open event file with its write buffer.
type eventFile struct {
	path     string
	f        *os.File
	w        *bufio.Writer
	size     int64     // bytes written to the file, buffered ones included
	pending  int       // records buffered since the last flush
	oldest   time.Time // when the oldest pending record was buffered
	frameBuf []byte    // scratch for framing records
}

// createEventFile creates a new event file in dir, failing rather than
// overwriting an existing one, and buffers its file_version record.
func createEventFile(dir string, now time.Time) (*eventFile, error) {
	path := filepath.Join(dir, eventFileName(now, hostname(), os.Getpid(), fileCounter.Add(1)-1))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("tensorboard: create event file: %w", err)
	}
	ef := &eventFile{path: path, f: f, w: bufio.NewWriter(f)}
	if err := ef.write(fileVersionEvent(wallTime(now)), now); err != nil {
		f.Close()
		return nil, err
	}
	return ef, nil
}

// openEventFile continues the event file at path, written by a run that
// was killed, cut back to its first size bytes (the records up to the
// checkpoint being resumed). It reports fs.ErrNotExist when the file is
// missing.
func openEventFile(path string, size int64) (*eventFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("tensorboard: resume event file: %w", err)
	}
	info, err := f.Stat()
	if err == nil && info.Size() > size {
		err = f.Truncate(size)
		if err == nil {
			err = f.Sync()
		}
	} else if err == nil {
		size = info.Size()
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("tensorboard: resume event file %s: %w", path, err)
	}
	return &eventFile{path: path, f: f, w: bufio.NewWriter(f), size: size}, nil
}

// write buffers event as one TFRecord.
func (ef *eventFile) write(event []byte, now time.Time) error {
	ef.frameBuf = appendRecord(ef.frameBuf[:0], event)
	if _, err := ef.w.Write(ef.frameBuf); err != nil {
		return fmt.Errorf("tensorboard: write %s: %w", ef.path, err)
	}
	ef.size += int64(len(ef.frameBuf))
	if ef.pending == 0 {
		ef.oldest = now
	}
	ef.pending++
	return nil
}

// flush writes buffered records to the file; with sync it also commits the
// file to stable storage.
func (ef *eventFile) flush(sync bool) error {
	if err := ef.w.Flush(); err != nil {
		return fmt.Errorf("tensorboard: write %s: %w", ef.path, err)
	}
	ef.pending = 0
	if sync {
		if err := ef.f.Sync(); err != nil {
			return fmt.Errorf("tensorboard: sync %s: %w", ef.path, err)
		}
	}
	return nil
}

// close flushes, syncs and closes the file.
func (ef *eventFile) close() error {
	err := ef.flush(true)
	if cerr := ef.f.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("tensorboard: close %s: %w", ef.path, cerr)
	}
	return err
}

// wallTime returns t in seconds since the Unix epoch, as Event.wall_time.
func wallTime(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}
