package tensorboard

import (
	"encoding/binary"
	"hash/crc32"
)

// castagnoli is the CRC-32C table TFRecord checksums use.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maskDelta is added to the rotated CRC by maskCRC.
const maskDelta = 0xa282ead8

// maskCRC returns TFRecord's masked CRC-32C of data: the checksum rotated
// right by 15 bits plus a constant, so that data holding checksums does not
// checksum to trivial values.
func maskCRC(data []byte) uint32 {
	crc := crc32.Checksum(data, castagnoli)
	return ((crc >> 15) | (crc << 17)) + maskDelta
}

// appendRecord appends data to b framed as one TFRecord:
//
//	uint64 length (little-endian)
//	uint32 masked CRC-32C of the 8 length bytes
//	data
//	uint32 masked CRC-32C of data
func appendRecord(b, data []byte) []byte {
	var header [8]byte
	binary.LittleEndian.PutUint64(header[:], uint64(len(data)))
	b = append(b, header[:]...)
	b = binary.LittleEndian.AppendUint32(b, maskCRC(header[:]))
	b = append(b, data...)
	return binary.LittleEndian.AppendUint32(b, maskCRC(data))
}
