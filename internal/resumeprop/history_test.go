package resumeprop

import (
	"encoding/binary"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/voltml/volt/checkpoint"
	"google.golang.org/protobuf/encoding/protowire"
)

// history is what a run (all its processes) left on disk: the logged rows
// of every version directory in version order (one continuous history),
// and its checkpoints.
type history struct {
	csv   []string // one "step=…,name=value,…" line per CSV row, cells sorted by name
	tb    []string // one "step tag bits" line per TensorBoard scalar, in file order
	ckpts map[string]*checkpoint.File
}

// readHistory reads the run under root.
func readHistory(root string) (*history, error) {
	h := &history{ckpts: map[string]*checkpoint.File{}}
	versions, err := versionDirs(filepath.Join(root, LogsName))
	if err != nil {
		return nil, err
	}
	for _, v := range versions {
		rows, err := readCSV(filepath.Join(v, "metrics.csv"))
		if err != nil {
			return nil, err
		}
		h.csv = append(h.csv, rows...)
		events, _ := filepath.Glob(filepath.Join(v, "events.out.tfevents.*"))
		sort.Strings(events)
		for _, e := range events {
			scalars, err := readScalars(e)
			if err != nil {
				return nil, err
			}
			h.tb = append(h.tb, scalars...)
		}
	}
	for _, d := range []string{StepCkptDir, EpochCkptDir} {
		if err := readCkpts(h.ckpts, filepath.Join(root, d), d+"/"); err != nil {
			return nil, err
		}
	}
	// The default checkpoint (no ModelCheckpoint): it keeps the latest
	// epoch's file in the newest version directory that saved one.
	for i := len(versions) - 1; i >= 0; i-- {
		dir := filepath.Join(versions[i], "checkpoints")
		if files, _ := filepath.Glob(filepath.Join(dir, "*.ckpt")); len(files) > 0 {
			if err := readCkpts(h.ckpts, dir, "default/"); err != nil {
				return nil, err
			}
			break
		}
	}
	return h, nil
}

// versionDirs returns dir's version_N directories sorted by N.
func versionDirs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	type v struct {
		n    int
		path string
	}
	var vs []v
	for _, e := range entries {
		n, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "version_"))
		if e.IsDir() && strings.HasPrefix(e.Name(), "version_") && err == nil {
			vs = append(vs, v{n, filepath.Join(dir, e.Name())})
		}
	}
	slices.SortFunc(vs, func(a, b v) int { return a.n - b.n })
	out := make([]string, len(vs))
	for i, x := range vs {
		out[i] = x.path
	}
	return out, nil
}

// readCSV returns the rows of a metrics.csv (none when it is missing).
func readCSV(path string) ([]string, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, nil
	}
	header := recs[0]
	var rows []string
	for _, rec := range recs[1:] {
		var cells []string
		for i, v := range rec {
			if v != "" {
				cells = append(cells, header[i]+"="+v)
			}
		}
		sort.Strings(cells)
		rows = append(rows, strings.Join(cells, ","))
	}
	return rows, nil
}

// readScalars returns the simple_value scalars of a TensorBoard event file
// (TFRecord framing: length, its masked CRC, data, its masked CRC; the
// CRCs are the logger's own business and tested with it). A record cut
// short at the end (a kill during a write) ends the file.
func readScalars(path string) ([]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for len(raw) >= 12 {
		n := binary.LittleEndian.Uint64(raw)
		if uint64(len(raw)) < 12+n+4 {
			break
		}
		rec := raw[12 : 12+n]
		raw = raw[12+n+4:]
		lines, err := eventScalars(rec)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, lines...)
	}
	return out, nil
}

// eventScalars decodes a tensorflow.Event: step (field 2) and the
// summary's (field 5) values, each a tag (1) and a simple_value (2).
func eventScalars(b []byte) ([]string, error) {
	var step int64
	var values [][]byte
	err := fields(b, func(num protowire.Number, typ protowire.Type, v uint64, sub []byte) {
		switch {
		case num == 2 && typ == protowire.VarintType:
			step = int64(v)
		case num == 5 && typ == protowire.BytesType:
			_ = fields(sub, func(num protowire.Number, typ protowire.Type, _ uint64, val []byte) {
				if num == 1 && typ == protowire.BytesType {
					values = append(values, val)
				}
			})
		}
	})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, val := range values {
		var tag string
		var bits uint32
		simple := false
		_ = fields(val, func(num protowire.Number, typ protowire.Type, v uint64, s []byte) {
			switch {
			case num == 1 && typ == protowire.BytesType:
				tag = string(s)
			case num == 2 && typ == protowire.Fixed32Type:
				bits, simple = uint32(v), true
			}
		})
		if simple {
			out = append(out, fmt.Sprintf("%d %s %08x (%g)", step, tag, bits, math.Float32frombits(bits)))
		}
	}
	return out, nil
}

// fields calls f with every field of the protobuf message b.
func fields(b []byte, f func(num protowire.Number, typ protowire.Type, v uint64, sub []byte)) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		switch typ {
		case protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			f(num, typ, v, nil)
			b = b[n:]
		case protowire.Fixed32Type:
			v, n := protowire.ConsumeFixed32(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			f(num, typ, uint64(v), nil)
			b = b[n:]
		case protowire.Fixed64Type:
			v, n := protowire.ConsumeFixed64(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			f(num, typ, v, nil)
			b = b[n:]
		case protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			f(num, typ, 0, v)
			b = b[n:]
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
		}
	}
	return nil
}

// readCkpts loads every .ckpt file of dir into into, keyed by prefix+name.
func readCkpts(into map[string]*checkpoint.File, dir, prefix string) error {
	files, _ := filepath.Glob(filepath.Join(dir, "*.ckpt"))
	for _, p := range files {
		f, err := checkpoint.Load(p)
		if err != nil {
			return err
		}
		into[prefix+filepath.Base(p)] = f
	}
	return nil
}
