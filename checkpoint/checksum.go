package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"maps"
)

// checksumPrefix starts every checksum value.
const checksumPrefix = "sha256:"

// newChecksum returns a SHA-256 hash already fed with the canonical header
// of infos and metadata (without its "checksum" key); the caller feeds it
// the data section.
func newChecksum(infos []TensorInfo, metadata map[string]string) hash.Hash {
	m := maps.Clone(metadata)
	delete(m, keyChecksum)
	h := sha256.New()
	h.Write(encodeHeader(infos, m))
	return h
}

// formatChecksum returns "sha256:<hex>" of h.
func formatChecksum(h hash.Hash) string {
	return checksumPrefix + hex.EncodeToString(h.Sum(nil))
}
