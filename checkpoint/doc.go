// Package checkpoint reads and writes volt checkpoints.
//
// The trainer uses it for every checkpoint (volt.Trainer.SaveCheckpoint,
// volt.FromCheckpoint); use it directly to read one: [Load] returns a [File]
// (its tensors, the trainer state and the volt version) after checking its
// checksum, and [Save] writes one. "volt ckpt inspect FILE" prints a file.
//
// # File format
//
// A checkpoint is a single safetensors file, so any safetensors reader
// (Python's safetensors, Rust's safetensors crate, …) can read its weights:
//
//	[8 bytes]  N, the header length, an unsigned 64-bit little-endian integer
//	[N bytes]  the header: a UTF-8 JSON object, padded with spaces (0x20) so
//	           that N is a multiple of 8
//	[rest]     the data section: the raw little-endian bytes of every tensor
//
// The header maps each tensor name to
// {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, where the
// offsets are byte offsets relative to the start of the data section, and
// holds string-to-string metadata under the key "__metadata__". Save writes
// the tensors sorted by name, the data laid out in the same order with no
// gaps, and nothing after the last tensor. The supported dtypes are F64, F32,
// F16, BF16, I64, I32, I16, I8, U8, BOOL (one byte per value), U64, U32 and
// U16.
//
// # volt metadata
//
// The "__metadata__" object of a volt checkpoint holds:
//
//	"format":         "volt-checkpoint"
//	"format_version": "1"
//	"volt_version":   the version of volt that wrote the file (File.VoltVersion)
//	"state":          the trainer's state as compact JSON (File.State), opaque
//	                  to this package
//	"checksum":       "sha256:" followed by 64 lowercase hex digits
//
// # Checksum
//
// The checksum is the SHA-256 of the canonical header followed by the whole
// data section:
//
//	checksum = "sha256:" + hex(SHA-256(canonical_header || data_section))
//
// The canonical header is the header's JSON object without the "checksum"
// metadata key, encoded with:
//
//   - exactly these keys: one per tensor, whose value has only the keys
//     "data_offsets", "dtype" and "shape", and "__metadata__" with every
//     metadata entry except "checksum";
//   - the keys of every object sorted by their UTF-8 bytes;
//   - no whitespace and no padding;
//   - integers in plain decimal;
//   - strings as UTF-8, escaping only '"' and '\' (as \" and \\), \b, \f, \n,
//     \r, \t with their short escapes, and the other bytes below 0x20 as
//     \u00XX with lowercase hex digits.
//
// In Python this is
//
//	json.dumps(header_without_checksum, sort_keys=True,
//	           separators=(",", ":"), ensure_ascii=False).encode("utf-8")
//
// Load and Verify recompute the checksum and fail with ErrChecksum when it
// differs from the stored one.
//
// # Crash safety
//
// Save writes to a temporary file in the destination directory (named
// ".<base>.<random>.tmp"), fsyncs it, renames it over the destination and
// fsyncs the directory, so a crash leaves either the previous checkpoint or
// the new one, never a mix. Load never looks at temporary files.
package checkpoint
