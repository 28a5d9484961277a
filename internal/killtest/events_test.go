package killtest

// An independent reader of TensorBoard event files, for the logged-rows
// test: its own TFRecord framing and CRC-32C checks, and protobuf decoding
// against the upstream event.proto kept in logger/tensorboard/testdata,
// compiled at test time. It shares no code with the logger.

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// protoDir holds the upstream .proto definitions.
const protoDir = "../../logger/tensorboard/testdata/proto"

var (
	eventOnce sync.Once
	eventDesc protoreflect.MessageDescriptor
	eventErr  error
)

// eventDescriptor compiles tensorflow.Event once.
func eventDescriptor(t *testing.T) protoreflect.MessageDescriptor {
	t.Helper()
	eventOnce.Do(func() {
		c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: []string{protoDir}})}
		files, err := c.Compile(context.Background(), "tensorflow/core/util/event.proto")
		if err != nil {
			eventErr = err
			return
		}
		d, err := files.AsResolver().FindDescriptorByName("tensorflow.Event")
		if err != nil {
			eventErr = err
			return
		}
		eventDesc = d.(protoreflect.MessageDescriptor)
	})
	if eventErr != nil {
		t.Fatalf("compiling %s: %v", protoDir, eventErr)
	}
	return eventDesc
}

// scalar is one simple_value of an event file.
type scalar struct {
	Step  int64
	Tag   string
	Value float32
}

// tfRecords splits a TFRecord file into its records, checking both masked
// CRC-32C checksums of each.
func tfRecords(b []byte) ([][]byte, error) {
	table := crc32.MakeTable(crc32.Castagnoli)
	masked := func(p []byte) uint32 {
		c := crc32.Checksum(p, table)
		return (c>>15 | c<<17) + 0xa282ead8
	}
	var out [][]byte
	for off := 0; off < len(b); {
		if len(b)-off < 12 {
			return nil, fmt.Errorf("offset %d: %d bytes left, a record header needs 12", off, len(b)-off)
		}
		if binary.LittleEndian.Uint32(b[off+8:]) != masked(b[off:off+8]) {
			return nil, fmt.Errorf("offset %d: bad length checksum", off)
		}
		n := int(binary.LittleEndian.Uint64(b[off:]))
		body := off + 12
		if len(b)-body < n+4 {
			return nil, fmt.Errorf("offset %d: record of %d bytes truncated", off, n)
		}
		if binary.LittleEndian.Uint32(b[body+n:]) != masked(b[body:body+n]) {
			return nil, fmt.Errorf("offset %d: bad data checksum", off)
		}
		out = append(out, b[body:body+n])
		off = body + n + 4
	}
	return out, nil
}

// eventScalars returns, in file order, the scalars of every event file in
// dir (files in name order, as TensorBoard reads them).
func eventScalars(t *testing.T, dir string) []scalar {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "events.out.tfevents.*"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	desc := eventDescriptor(t)
	fields := desc.Fields()
	summaryFd, stepFd := fields.ByName("summary"), fields.ByName("step")
	var out []scalar
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := tfRecords(b)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, r := range recs {
			ev := dynamicpb.NewMessage(desc)
			if err := proto.Unmarshal(r, ev); err != nil {
				t.Fatalf("%s: decode tensorflow.Event: %v", path, err)
			}
			if !ev.Has(summaryFd) {
				continue
			}
			values := ev.Get(summaryFd).Message()
			list := values.Get(values.Descriptor().Fields().ByName("value")).List()
			for i := range list.Len() {
				v := list.Get(i).Message()
				vf := v.Descriptor().Fields()
				simple := vf.ByName("simple_value")
				if !v.Has(simple) {
					continue
				}
				out = append(out, scalar{Step: ev.Get(stepFd).Int(), Tag: v.Get(vf.ByName("tag")).String(), Value: float32(v.Get(simple).Float())})
			}
		}
	}
	return out
}
