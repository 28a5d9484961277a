package report

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// EventFilePrefix starts the names of TensorBoard event files
// (events.out.tfevents.<time>.<host>…), volt's and Lightning's alike.
const EventFilePrefix = "events.out.tfevents."

// eventFiles returns dir's TensorBoard event files, in name order (their
// names start with the creation time).
func eventFiles(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var files []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), EventFilePrefix) && e.Type().IsRegular() {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	slices.Sort(files)
	return files
}

// hasRunFiles reports whether dir holds a run: metrics.csv or TensorBoard
// event files.
func hasRunFiles(dir string) bool {
	return isFile(filepath.Join(dir, MetricsFileName)) || len(eventFiles(dir)) > 0
}

// tfEvent is what the report reads from one tensorflow.Event: its step and
// scalars, or the hparams of a session start.
type tfEvent struct {
	step    int64
	scalars map[string]float64
	hparams map[string]any
}

// loadEvents reads dir's event files into the rows metrics.csv would hold
// (one per event with scalars; an "epoch" scalar is the epoch column) and
// the hparams of the run's session start. A truncated or corrupt record
// ends its file's reading with a note: a killed run leaves one.
func loadEvents(dir string) (m *Metrics, hparams map[string]any, notes []string, err error) {
	var events []tfEvent
	for _, path := range eventFiles(dir) {
		evs, note, err := readEventFile(path)
		if err != nil {
			return nil, nil, nil, err
		}
		if note != "" {
			notes = append(notes, note)
		}
		events = append(events, evs...)
	}
	tags := map[string]bool{}
	for _, ev := range events {
		if ev.hparams != nil {
			hparams = ev.hparams
		}
		for tag := range ev.scalars {
			tags[tag] = true
		}
	}
	// The rows as a metrics.csv, so that both sources mean the same.
	names := []string{}
	for tag := range tags {
		if tag != epochColumn && tag != stepColumn {
			names = append(names, tag)
		}
	}
	slices.Sort(names)
	var csv strings.Builder
	csv.WriteString(stepColumn + "," + epochColumn)
	for _, n := range names {
		csv.WriteString("," + csvField(n))
	}
	csv.WriteString("\n")
	for _, ev := range events {
		if len(ev.scalars) == 0 {
			continue
		}
		csv.WriteString(strconv.FormatInt(ev.step, 10) + ",")
		if e, ok := ev.scalars[epochColumn]; ok && e >= 0 && e == math.Trunc(e) {
			csv.WriteString(strconv.FormatFloat(e, 'f', -1, 64))
		}
		for _, n := range names {
			csv.WriteString(",")
			if v, ok := ev.scalars[n]; ok {
				csv.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
			}
		}
		csv.WriteString("\n")
	}
	m, err = ParseMetrics(strings.NewReader(csv.String()), filepath.Join(dir, EventFilePrefix+"*"))
	return m, hparams, notes, err
}

// csvField quotes a CSV field when it needs it.
func csvField(s string) string {
	if strings.ContainsAny(s, ",\"\n\r") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

// castagnoli is the CRC-32C table of TFRecord's checksums.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maskedCRC is TFRecord's masked CRC-32C of b.
func maskedCRC(b []byte) uint32 {
	c := crc32.Checksum(b, castagnoli)
	return (c>>15 | c<<17) + 0xa282ead8
}

// readEventFile reads the TFRecords of one event file (length, its CRC,
// the Event, its CRC) and decodes each Event. A record cut short or whose
// CRC does not match stops the reading, with a note.
func readEventFile(path string) ([]tfEvent, string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("report: %w", err)
	}
	var events []tfEvent
	r := bytes.NewReader(b)
	for n := 0; ; n++ {
		var head [12]byte
		if _, err := io.ReadFull(r, head[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return events, "", nil
			}
			return events, fmt.Sprintf("%s: record %d is cut short (a run killed while writing); read up to it", filepath.Base(path), n), nil
		}
		length := binary.LittleEndian.Uint64(head[:8])
		if maskedCRC(head[:8]) != binary.LittleEndian.Uint32(head[8:]) || length > uint64(r.Len()) {
			return events, fmt.Sprintf("%s: record %d has a bad length or checksum; read up to it", filepath.Base(path), n), nil
		}
		data := make([]byte, length+4)
		if _, err := io.ReadFull(r, data); err != nil {
			return events, fmt.Sprintf("%s: record %d is cut short (a run killed while writing); read up to it", filepath.Base(path), n), nil
		}
		if maskedCRC(data[:length]) != binary.LittleEndian.Uint32(data[length:]) {
			return events, fmt.Sprintf("%s: record %d has a bad checksum; read up to it", filepath.Base(path), n), nil
		}
		ev, err := decodeEvent(data[:length])
		if err != nil {
			return nil, "", fmt.Errorf("report: %s: record %d: %w", path, n, err)
		}
		events = append(events, ev)
	}
}

// Field numbers of the TensorBoard messages read (event.proto, summary.proto,
// tensor.proto, hparams' plugin_data.proto, struct.proto).
const (
	fEventStep        protowire.Number = 2
	fEventSummary     protowire.Number = 5
	fSummaryValue     protowire.Number = 1
	fValueTag         protowire.Number = 1
	fValueSimple      protowire.Number = 2
	fValueTensor      protowire.Number = 8
	fValueMetadata    protowire.Number = 9
	fMetadataPlugin   protowire.Number = 1
	fPluginName       protowire.Number = 1
	fPluginContent    protowire.Number = 2
	fTensorDtype      protowire.Number = 1
	fTensorContent    protowire.Number = 4
	fTensorFloatVal   protowire.Number = 5
	fTensorDoubleVal  protowire.Number = 6
	fHparamsStart     protowire.Number = 3
	fStartHparams     protowire.Number = 1
	fEntryKey         protowire.Number = 1
	fEntryValue       protowire.Number = 2
	fStructNumber     protowire.Number = 2
	fStructString     protowire.Number = 3
	fStructBool       protowire.Number = 4
	dtFloat, dtDouble uint64           = 1, 2
	hparamsPluginName                  = "hparams"
	scalarsPluginName                  = "scalars"
)

// fields calls f for each field of the message b.
func fields(b []byte, f func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var u uint32
			u, n = protowire.ConsumeFixed32(b)
			x = uint64(u)
		case protowire.Fixed64Type:
			x, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := f(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}

// decodeEvent reads an Event's step, scalar values and hparams.
func decodeEvent(b []byte) (tfEvent, error) {
	ev := tfEvent{}
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch {
		case num == fEventStep && typ == protowire.VarintType:
			ev.step = int64(x)
		case num == fEventSummary && typ == protowire.BytesType:
			return fields(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
				if num == fSummaryValue && typ == protowire.BytesType {
					return decodeValue(v, &ev)
				}
				return nil
			})
		}
		return nil
	})
	return ev, err
}

// decodeValue reads one Summary.Value into ev: a scalar (simple_value, or a
// one-element float tensor of the scalars plugin) or the hparams plugin's
// session start; other plugins' values (text, histograms) are skipped.
func decodeValue(b []byte, ev *tfEvent) error {
	var tag, plugin string
	var content, tensor []byte
	simple, hasSimple := 0.0, false
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch {
		case num == fValueTag && typ == protowire.BytesType:
			tag = string(v)
		case num == fValueSimple && typ == protowire.Fixed32Type:
			simple, hasSimple = float64(math.Float32frombits(uint32(x))), true
		case num == fValueTensor && typ == protowire.BytesType:
			tensor = v
		case num == fValueMetadata && typ == protowire.BytesType:
			return fields(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
				if num == fMetadataPlugin && typ == protowire.BytesType {
					return fields(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
						switch {
						case num == fPluginName && typ == protowire.BytesType:
							plugin = string(v)
						case num == fPluginContent && typ == protowire.BytesType:
							content = v
						}
						return nil
					})
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return err
	}
	switch {
	case plugin == hparamsPluginName:
		h, err := sessionStartHparams(content)
		if err != nil {
			return fmt.Errorf("hparams: %w", err)
		}
		if h != nil {
			ev.hparams = h
		}
	case hasSimple && (plugin == "" || plugin == scalarsPluginName):
		ev.scalars = setScalar(ev.scalars, tag, simple)
	case tensor != nil && (plugin == "" || plugin == scalarsPluginName):
		if v, ok := tensorScalar(tensor); ok {
			ev.scalars = setScalar(ev.scalars, tag, v)
		}
	}
	return nil
}

// setScalar sets m[tag] = v, making m when nil.
func setScalar(m map[string]float64, tag string, v float64) map[string]float64 {
	if m == nil {
		m = map[string]float64{}
	}
	m[tag] = v
	return m
}

// tensorScalar reads a one-element DT_FLOAT or DT_DOUBLE TensorProto.
func tensorScalar(b []byte) (float64, bool) {
	var dtype uint64
	var vals []float64
	_ = fields(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch {
		case num == fTensorDtype && typ == protowire.VarintType:
			dtype = x
		case num == fTensorContent && typ == protowire.BytesType:
			switch {
			case dtype == dtFloat && len(v) == 4:
				vals = append(vals, float64(math.Float32frombits(binary.LittleEndian.Uint32(v))))
			case dtype == dtDouble && len(v) == 8:
				vals = append(vals, math.Float64frombits(binary.LittleEndian.Uint64(v)))
			}
		case num == fTensorFloatVal && typ == protowire.Fixed32Type:
			vals = append(vals, float64(math.Float32frombits(uint32(x))))
		case num == fTensorFloatVal && typ == protowire.BytesType:
			for i := 0; i+4 <= len(v); i += 4 {
				vals = append(vals, float64(math.Float32frombits(binary.LittleEndian.Uint32(v[i:]))))
			}
		case num == fTensorDoubleVal && typ == protowire.Fixed64Type:
			vals = append(vals, math.Float64frombits(x))
		case num == fTensorDoubleVal && typ == protowire.BytesType:
			for i := 0; i+8 <= len(v); i += 8 {
				vals = append(vals, math.Float64frombits(binary.LittleEndian.Uint64(v[i:])))
			}
		}
		return nil
	})
	if len(vals) != 1 {
		return 0, false
	}
	return vals[0], true
}

// sessionStartHparams reads the hparams of an HParamsPluginData's
// session_start_info (nil when it holds another message: the experiment or
// the session end).
func sessionStartHparams(b []byte) (map[string]any, error) {
	var out map[string]any
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num != fHparamsStart || typ != protowire.BytesType {
			return nil
		}
		out = map[string]any{}
		return fields(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
			if num != fStartHparams || typ != protowire.BytesType {
				return nil
			}
			var key string
			var value any
			err := fields(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
				switch {
				case num == fEntryKey && typ == protowire.BytesType:
					key = string(v)
				case num == fEntryValue && typ == protowire.BytesType:
					return fields(v, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
						switch {
						case num == fStructNumber && typ == protowire.Fixed64Type:
							value = math.Float64frombits(x)
						case num == fStructString && typ == protowire.BytesType:
							value = string(v)
						case num == fStructBool && typ == protowire.VarintType:
							value = x != 0
						}
						return nil
					})
				}
				return nil
			})
			if err == nil && key != "" {
				out[key] = value
			}
			return err
		})
	})
	return out, err
}
