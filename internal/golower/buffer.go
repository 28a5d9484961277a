package golower

import "github.com/gomlx/compute"

// buffer is a wrapped backend's buffer that reports the wrapper as its
// backend.
type buffer struct {
	compute.Buffer
	backend *Backend
}

// wrapBuffer wraps buf; nil stays nil so that error returns stay nil.
func (b *Backend) wrapBuffer(buf compute.Buffer) compute.Buffer {
	if buf == nil {
		return nil
	}
	return &buffer{Buffer: buf, backend: b}
}

// unwrapBuffer returns the wrapped backend's buffer.
func unwrapBuffer(buf compute.Buffer) compute.Buffer {
	if w, ok := buf.(*buffer); ok {
		return w.Buffer
	}
	return buf
}

// Backend implements compute.Buffer: the wrapper.
func (buf *buffer) Backend() compute.Backend { return buf.backend }

// CopyToDevice implements compute.Buffer.
func (buf *buffer) CopyToDevice(deviceNum compute.DeviceNum) (compute.Buffer, error) {
	out, err := buf.Buffer.CopyToDevice(deviceNum)
	return buf.backend.wrapBuffer(out), err
}
