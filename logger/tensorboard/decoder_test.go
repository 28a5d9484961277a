package tensorboard

// An independent reader for the files the logger writes: its own TFRecord
// framing and CRC checks, and protobuf decoding against the upstream .proto
// definitions in testdata/proto, compiled at test time.

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"sync"
	"testing"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/linker"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// protoFiles are the testdata/proto files compiled by the decoder; their
// imports are found relative to testdata/proto.
var protoFiles = []string{
	"tensorflow/core/util/event.proto",
	"tensorboard/plugins/hparams/plugin_data.proto",
}

var (
	schemaOnce  sync.Once
	schemaFiles linker.Files
	schemaErr   error
)

// message returns the descriptor of the message named fullName, compiling
// testdata/proto on first use.
func message(t *testing.T, fullName protoreflect.FullName) protoreflect.MessageDescriptor {
	t.Helper()
	schemaOnce.Do(func() {
		c := protocompile.Compiler{
			Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: []string{"testdata/proto"}}),
		}
		schemaFiles, schemaErr = c.Compile(context.Background(), protoFiles...)
	})
	if schemaErr != nil {
		t.Fatalf("compile testdata/proto: %v", schemaErr)
	}
	d, err := schemaFiles.AsResolver().FindDescriptorByName(fullName)
	if err != nil {
		t.Fatalf("find %s in testdata/proto: %v", fullName, err)
	}
	md, ok := d.(protoreflect.MessageDescriptor)
	if !ok {
		t.Fatalf("%s is a %T, not a message", fullName, d)
	}
	return md
}

// decode unmarshals data as the message fullName.
func decode(t *testing.T, fullName protoreflect.FullName, data []byte) *dynamicpb.Message {
	t.Helper()
	m := dynamicpb.NewMessage(message(t, fullName))
	if err := proto.Unmarshal(data, m); err != nil {
		t.Fatalf("decode %s: %v", fullName, err)
	}
	return m
}

// crc32cMasked is TFRecord's masked CRC-32C, written out independently of
// the package's implementation.
func crc32cMasked(b []byte) uint32 {
	c := crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli))
	return (c>>15 | c<<17) + 0xa282ead8
}

// readRecords splits a TFRecord file's contents into records, verifying
// the length and data checksums of each.
func readRecords(data []byte) ([][]byte, error) {
	var recs [][]byte
	for off := 0; off < len(data); {
		if len(data)-off < 12 {
			return nil, fmt.Errorf("record at offset %d: truncated header (%d bytes left)", off, len(data)-off)
		}
		lenBytes := data[off : off+8]
		if got, want := binary.LittleEndian.Uint32(data[off+8:]), crc32cMasked(lenBytes); got != want {
			return nil, fmt.Errorf("record at offset %d: length crc %#x, want %#x", off, got, want)
		}
		n := binary.LittleEndian.Uint64(lenBytes)
		off += 12
		if uint64(len(data)-off) < n+4 {
			return nil, fmt.Errorf("record at offset %d: truncated data (length %d, %d bytes left)", off-12, n, len(data)-off)
		}
		body := data[off : off+int(n)]
		if got, want := binary.LittleEndian.Uint32(data[off+int(n):]), crc32cMasked(body); got != want {
			return nil, fmt.Errorf("record at offset %d: data crc %#x, want %#x", off-12, got, want)
		}
		recs = append(recs, body)
		off += int(n) + 4
	}
	return recs, nil
}

// readEvents reads path and decodes every record as a tensorflow.Event.
func readEvents(t *testing.T, path string) []*dynamicpb.Message {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := readRecords(data)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	events := make([]*dynamicpb.Message, len(recs))
	for i, r := range recs {
		events[i] = decode(t, "tensorflow.Event", r)
	}
	return events
}

// get returns the value of m's field name, failing on unknown names.
func get(t *testing.T, m protoreflect.Message, name protoreflect.Name) protoreflect.Value {
	t.Helper()
	fd := m.Descriptor().Fields().ByName(name)
	if fd == nil {
		t.Fatalf("%s has no field %s", m.Descriptor().FullName(), name)
	}
	return m.Get(fd)
}

// has reports whether m's field name is set (oneof members included, even
// at their zero value).
func has(t *testing.T, m protoreflect.Message, name protoreflect.Name) bool {
	t.Helper()
	fd := m.Descriptor().Fields().ByName(name)
	if fd == nil {
		t.Fatalf("%s has no field %s", m.Descriptor().FullName(), name)
	}
	return m.Has(fd)
}

// enumName returns the name of the enum value in m's field name.
func enumName(t *testing.T, m protoreflect.Message, name protoreflect.Name) string {
	t.Helper()
	fd := m.Descriptor().Fields().ByName(name)
	ev := fd.Enum().Values().ByNumber(m.Get(fd).Enum())
	if ev == nil {
		return fmt.Sprintf("%s(%d)", fd.Enum().Name(), m.Get(fd).Enum())
	}
	return string(ev.Name())
}

// jsonOf renders m with protojson for failure messages and comparisons.
func jsonOf(m proto.Message) string {
	b, err := protojson.Marshal(m)
	if err != nil {
		return fmt.Sprintf("<protojson: %v>", err)
	}
	return string(b)
}

// scalar is one decoded simple_value.
type scalar struct {
	tag   string
	step  int64
	value float32
}

// summaryValues returns the Summary.Value messages of ev with their step,
// or nil when ev holds no summary.
func summaryValues(t *testing.T, ev protoreflect.Message) []protoreflect.Message {
	t.Helper()
	if !has(t, ev, "summary") {
		return nil
	}
	list := get(t, get(t, ev, "summary").Message(), "value").List()
	out := make([]protoreflect.Message, list.Len())
	for i := range out {
		out[i] = list.Get(i).Message()
	}
	return out
}

// scalars returns every simple_value in events.
func scalars(t *testing.T, events []*dynamicpb.Message) []scalar {
	t.Helper()
	var out []scalar
	for _, ev := range events {
		for _, v := range summaryValues(t, ev) {
			if has(t, v, "simple_value") {
				out = append(out, scalar{get(t, v, "tag").String(), get(t, ev, "step").Int(), float32(get(t, v, "simple_value").Float())})
			}
		}
	}
	return out
}

// pluginValue is a Summary.Value carrying plugin metadata.
type pluginValue struct {
	step  int64
	value protoreflect.Message
	data  *dynamicpb.Message // decoded HParamsPluginData for "hparams"
}

// pluginValues returns, by tag in file order, the summary values whose
// metadata names plugin; hparams contents are decoded as HParamsPluginData.
func pluginValues(t *testing.T, events []*dynamicpb.Message, plugin string) map[string][]pluginValue {
	t.Helper()
	out := map[string][]pluginValue{}
	for _, ev := range events {
		for _, v := range summaryValues(t, ev) {
			if !has(t, v, "metadata") {
				continue
			}
			pd := get(t, get(t, v, "metadata").Message(), "plugin_data").Message()
			if get(t, pd, "plugin_name").String() != plugin {
				continue
			}
			pv := pluginValue{step: get(t, ev, "step").Int(), value: v}
			if plugin == hparamsPluginName {
				pv.data = decode(t, "tensorboard.hparams.HParamsPluginData", get(t, pd, "content").Bytes())
			}
			tag := get(t, v, "tag").String()
			out[tag] = append(out[tag], pv)
		}
	}
	return out
}
