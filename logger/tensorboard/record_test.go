package tensorboard

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"
)

func TestMaskCRC(t *testing.T) {
	// CRC-32C check value of "123456789" (RFC 3720, appendix B.4).
	if got := crc32.Checksum([]byte("123456789"), castagnoli); got != 0xe3069283 {
		t.Fatalf("CRC-32C(123456789) = %#x, want 0xe3069283", got)
	}
	tests := []struct {
		data []byte
		want uint32
	}{
		// ((0xe3069283 >> 15) | (0xe3069283 << 17)) + 0xa282ead8, mod 2^32.
		{[]byte("123456789"), (((0xe3069283 >> 15) | ((0xe3069283 << 17) & 0xffffffff)) + 0xa282ead8) & 0xffffffff},
		{nil, maskDelta}, // CRC-32C of nothing is 0
	}
	for _, tt := range tests {
		if got := maskCRC(tt.data); got != tt.want {
			t.Errorf("maskCRC(%q) = %#x, want %#x", tt.data, got, tt.want)
		}
	}
}

func TestAppendRecordLayout(t *testing.T) {
	tests := [][]byte{nil, []byte("x"), bytes.Repeat([]byte{0xff}, 300)}
	for _, data := range tests {
		rec := appendRecord([]byte("prefix"), data)
		rec = bytes.TrimPrefix(rec, []byte("prefix"))
		if len(rec) != 16+len(data) {
			t.Fatalf("record of %d bytes is %d long, want %d", len(data), len(rec), 16+len(data))
		}
		if n := binary.LittleEndian.Uint64(rec); n != uint64(len(data)) {
			t.Errorf("length field %d, want %d", n, len(data))
		}
		if !bytes.Equal(rec[12:12+len(data)], data) {
			t.Errorf("payload changed")
		}
		got, err := readRecords(rec)
		if err != nil || len(got) != 1 || !bytes.Equal(got[0], data) {
			t.Errorf("independent reader: %q, %v; want one record %q", got, err, data)
		}
	}
}
