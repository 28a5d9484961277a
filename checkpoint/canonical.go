package checkpoint

import (
	"bytes"
	"slices"
	"strconv"
)

// encodeHeader returns the canonical JSON encoding of a header with the
// given tensors and metadata (see "Checksum" in the package documentation).
// The metadata is encoded as given: callers drop "checksum" to get the
// checksummed form.
func encodeHeader(infos []TensorInfo, metadata map[string]string) []byte {
	type entry struct {
		key  string
		info *TensorInfo // nil for the metadata
	}
	entries := make([]entry, 0, len(infos)+1)
	for i := range infos {
		entries = append(entries, entry{key: infos[i].Name, info: &infos[i]})
	}
	entries = append(entries, entry{key: metadataKey})
	slices.SortFunc(entries, func(a, b entry) int { return compareStrings(a.key, b.key) })

	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, e := range entries {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeString(&buf, e.key)
		buf.WriteByte(':')
		if e.info == nil {
			writeMetadata(&buf, metadata)
		} else {
			writeTensorInfo(&buf, e.info)
		}
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

// compareStrings orders strings by their bytes.
func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// writeTensorInfo writes {"data_offsets":[b,e],"dtype":"F32","shape":[..]}.
func writeTensorInfo(buf *bytes.Buffer, ti *TensorInfo) {
	buf.WriteString(`{"data_offsets":[`)
	buf.WriteString(strconv.FormatInt(ti.Offsets[0], 10))
	buf.WriteByte(',')
	buf.WriteString(strconv.FormatInt(ti.Offsets[1], 10))
	buf.WriteString(`],"dtype":`)
	writeString(buf, dtypeNames[ti.DType])
	buf.WriteString(`,"shape":[`)
	for i, d := range ti.Shape {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString(strconv.Itoa(d))
	}
	buf.WriteString("]}")
}

// writeMetadata writes the metadata object with sorted keys.
func writeMetadata(buf *bytes.Buffer, metadata map[string]string) {
	keys := make([]string, 0, len(metadata))
	for k := range metadata {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeString(buf, k)
		buf.WriteByte(':')
		writeString(buf, metadata[k])
	}
	buf.WriteByte('}')
}

// writeString writes s as a JSON string, escaping as Python's
// json.dumps(ensure_ascii=False) does. s must be valid UTF-8.
func writeString(buf *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	buf.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			buf.WriteString(`\"`)
		case '\\':
			buf.WriteString(`\\`)
		case '\b':
			buf.WriteString(`\b`)
		case '\f':
			buf.WriteString(`\f`)
		case '\n':
			buf.WriteString(`\n`)
		case '\r':
			buf.WriteString(`\r`)
		case '\t':
			buf.WriteString(`\t`)
		default:
			if c < 0x20 {
				buf.WriteString(`\u00`)
				buf.WriteByte(hex[c>>4])
				buf.WriteByte(hex[c&0xf])
			} else {
				buf.WriteByte(c)
			}
		}
	}
	buf.WriteByte('"')
}
