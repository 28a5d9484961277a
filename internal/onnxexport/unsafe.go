package onnxexport

import (
	"reflect"
	"unsafe"
)

// unsafeBytes views the backing array of the slice s as n bytes (the host
// is little-endian, as ONNX's raw_data is).
func unsafeBytes(s reflect.Value, n int) []byte {
	return unsafe.Slice((*byte)(s.UnsafePointer()), n)
}
