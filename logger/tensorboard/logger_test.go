package tensorboard

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/voltml/volt/logger"
	"google.golang.org/protobuf/encoding/protojson"
)

func TestEventFileContents(t *testing.T) {
	l, clock := newTestLogger(t, Config{})
	calls := []struct {
		metrics map[string]float64
		step    int64
	}{
		{map[string]float64{"train_loss": 2.5, "lr": 0.1}, 0},
		{map[string]float64{"train_loss": 0, "acc": -1.25}, 1},
		{map[string]float64{"val_loss": math.Inf(1)}, 7},
		{map[string]float64{"train_loss": 1e-8}, 1 << 40},
	}
	must(t, l.LogHyperparams(map[string]any{"lr": 0.1, "optimizer": map[string]any{"name": "adam", "betas": []float64{0.9, 0.99}}}))
	for _, c := range calls {
		clock.t = clock.t.Add(time.Second)
		must(t, l.LogMetrics(c.metrics, c.step))
	}
	must(t, l.LogText("notes", "hello **world**", 3))
	must(t, l.Finalize(logger.StatusSuccess))

	events := readEvents(t, l.EventFile())
	if len(events) == 0 {
		t.Fatal("no events")
	}
	if got := get(t, events[0], "file_version").String(); got != "brain.Event:2" {
		t.Fatalf("first event %s: file_version %q, want brain.Event:2", jsonOf(events[0]), got)
	}
	if got := get(t, events[0], "wall_time").Float(); got != 1_700_000_000.25 {
		t.Errorf("first event wall_time = %v, want 1700000000.25", got)
	}
	for i, ev := range events[1:] {
		if has(t, ev, "file_version") {
			t.Errorf("event %d repeats file_version: %s", i+1, jsonOf(ev))
		}
	}

	t.Run("scalars", func(t *testing.T) {
		got := scalars(t, events)
		var want []scalar
		for _, c := range calls {
			for tag, v := range c.metrics {
				want = append(want, scalar{tag, c.step, float32(v)})
			}
		}
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("scalar %+v missing; file has %+v", w, got)
			}
		}
		if len(got) != len(want) {
			t.Errorf("file has %d scalars, want %d: %+v", len(got), len(want), got)
		}
	})

	t.Run("text", func(t *testing.T) {
		vals := pluginValues(t, events, textPluginName)["notes"]
		if len(vals) != 1 {
			t.Fatalf("got %d text values for notes, want 1", len(vals))
		}
		v := vals[0]
		if v.step != 3 {
			t.Errorf("text step = %d, want 3", v.step)
		}
		tensor := get(t, v.value, "tensor").Message()
		if got := enumName(t, tensor, "dtype"); got != "DT_STRING" {
			t.Errorf("text dtype = %s, want DT_STRING", got)
		}
		sv := get(t, tensor, "string_val").List()
		if sv.Len() != 1 || string(sv.Get(0).Bytes()) != "hello **world**" {
			t.Errorf("text tensor = %s, want one string_val %q", jsonOf(tensor.Interface()), "hello **world**")
		}
		if dims := get(t, get(t, tensor, "tensor_shape").Message(), "dim").List().Len(); dims != 0 {
			t.Errorf("text tensor has %d dims, want a scalar", dims)
		}
		md := get(t, v.value, "metadata").Message()
		if got := enumName(t, md, "data_class"); got != "DATA_CLASS_TENSOR" {
			t.Errorf("text data_class = %s, want DATA_CLASS_TENSOR", got)
		}
	})

	t.Run("hparams", func(t *testing.T) {
		hp := pluginValues(t, events, hparamsPluginName)
		for _, tag := range []string{sessionStartTag, experimentTag, sessionEndTag} {
			if len(hp[tag]) != 1 {
				t.Fatalf("%d values tagged %s, want 1", len(hp[tag]), tag)
			}
			if v := get(t, hp[tag][0].data, "version").Int(); v != 0 {
				t.Errorf("%s: plugin data version %d, want 0", tag, v)
			}
		}
		ssi := hp[sessionStartTag][0].data
		if !has(t, ssi, "session_start_info") {
			t.Fatalf("session start content has no session_start_info: %s", jsonOf(ssi))
		}
		start := get(t, ssi, "session_start_info").Message()
		gotHP := decodeJSON(t, protojson.Format(start.Interface()))["hparams"]
		wantHP := map[string]any{"lr": 0.1, "optimizer/name": "adam", "optimizer/betas": "[0.9,0.99]"}
		if !reflect.DeepEqual(gotHP, wantHP) {
			t.Errorf("session_start_info hparams = %v, want %v", gotHP, wantHP)
		}
		if got := get(t, start, "start_time_secs").Float(); got != 1_700_000_000.25 {
			t.Errorf("start_time_secs = %v, want 1700000000.25", got)
		}

		exp := get(t, hp[experimentTag][0].data, "experiment").Message()
		expJSON := decodeJSON(t, protojson.Format(exp.Interface()))
		wantInfos := []any{
			map[string]any{"name": "lr", "type": "DATA_TYPE_FLOAT64"},
			map[string]any{"name": "optimizer/betas", "type": "DATA_TYPE_STRING"},
			map[string]any{"name": "optimizer/name", "type": "DATA_TYPE_STRING"},
		}
		if !reflect.DeepEqual(expJSON["hparamInfos"], wantInfos) {
			t.Errorf("experiment hparamInfos = %v, want %v", expJSON["hparamInfos"], wantInfos)
		}
		var metricTags []string
		for _, mi := range expJSON["metricInfos"].([]any) {
			metricTags = append(metricTags, mi.(map[string]any)["name"].(map[string]any)["tag"].(string))
		}
		if want := []string{"acc", "lr", "train_loss", "val_loss"}; !slices.Equal(metricTags, want) {
			t.Errorf("experiment metric tags = %v, want %v", metricTags, want)
		}

		end := get(t, hp[sessionEndTag][0].data, "session_end_info").Message()
		if got := enumName(t, end, "status"); got != "STATUS_SUCCESS" {
			t.Errorf("session end status = %s, want STATUS_SUCCESS", got)
		}
	})
}

// decodeJSON unmarshals a JSON object.
func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return m
}

func TestSessionEndStatus(t *testing.T) {
	tests := []struct {
		status  string
		want    string
		wantErr bool
	}{
		{logger.StatusSuccess, "STATUS_SUCCESS", false},
		{logger.StatusFailed, "STATUS_FAILURE", false},
		{logger.StatusInterrupted, "STATUS_UNKNOWN", false},
		{"bogus", "STATUS_UNKNOWN", true},
	}
	for _, tt := range tests {
		t.Run(tt.status, func(t *testing.T) {
			l, _ := newTestLogger(t, Config{})
			must(t, l.LogHyperparams(map[string]any{"seed": 1}))
			err := l.Finalize(tt.status)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Finalize(%q) error = %v, want error %v", tt.status, err, tt.wantErr)
			}
			ends := pluginValues(t, readEvents(t, l.EventFile()), hparamsPluginName)[sessionEndTag]
			if len(ends) != 1 {
				t.Fatalf("%d session ends, want 1", len(ends))
			}
			end := get(t, ends[0].data, "session_end_info").Message()
			if got := enumName(t, end, "status"); got != tt.want {
				t.Errorf("status = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestHparamValuesKeepZeroValues(t *testing.T) {
	l, _ := newTestLogger(t, Config{})
	must(t, l.LogHyperparams(map[string]any{"n": 0, "on": false, "tag": "", "skip": nil, "k": uint8(3), "f32": float32(0.5)}))
	must(t, l.LogHyperparams(map[string]any{"on": true}))
	must(t, l.Save())
	starts := pluginValues(t, readEvents(t, l.EventFile()), hparamsPluginName)[sessionStartTag]
	if len(starts) != 2 {
		t.Fatalf("%d session starts, want 2 (one per call)", len(starts))
	}
	tests := []struct {
		call int
		want map[string]any
	}{
		{0, map[string]any{"n": 0.0, "on": false, "tag": "", "k": 3.0, "f32": 0.5}},
		{1, map[string]any{"n": 0.0, "on": true, "tag": "", "k": 3.0, "f32": 0.5}},
	}
	for _, tt := range tests {
		start := get(t, starts[tt.call].data, "session_start_info").Message()
		got := decodeJSON(t, protojson.Format(start.Interface()))["hparams"]
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("call %d: hparams = %v, want %v", tt.call, got, tt.want)
		}
	}
}

func TestCorruptedByteFailsCRC(t *testing.T) {
	l, _ := newTestLogger(t, Config{})
	must(t, l.LogMetrics(map[string]float64{"loss": 1}, 1))
	must(t, l.Finalize(logger.StatusSuccess))
	clean, err := os.ReadFile(l.EventFile())
	must(t, err)
	if _, err := readRecords(clean); err != nil {
		t.Fatalf("clean file: %v", err)
	}
	firstLen := int(clean[0]) // the file_version record is short
	tests := []struct {
		name    string
		offset  int
		wantErr string
	}{
		{"length", 0, "length crc"},
		{"length crc", 9, "length crc"},
		{"data", 12, "data crc"},
		{"data crc", 12 + firstLen + 1, "data crc"},
		{"second record data", 12 + firstLen + 4 + 12 + 2, "data crc"},
		{"last byte", len(clean) - 1, "data crc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := slices.Clone(clean)
			data[tt.offset] ^= 0x20
			_, err := readRecords(data)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("flipped byte %d: error %v, want %q", tt.offset, err, tt.wantErr)
			}
		})
	}
	t.Run("truncated", func(t *testing.T) {
		if _, err := readRecords(clean[:len(clean)-3]); err == nil || !strings.Contains(err.Error(), "truncated") {
			t.Fatalf("truncated file: error %v, want truncated", err)
		}
	})
}

func TestEventFileLayout(t *testing.T) {
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "exp", "version_4"), 0o755))
	l, clock := newTestLogger(t, Config{SaveDir: root, Name: "exp"})
	if l.Version() != 5 {
		t.Errorf("Version() = %d, want 5", l.Version())
	}
	if want := filepath.Join(root, "exp", "version_5"); l.LogDir() != want {
		t.Errorf("LogDir() = %q, want %q", l.LogDir(), want)
	}
	must(t, l.LogMetrics(map[string]float64{"a": 1}, 0))
	path := l.EventFile()
	if filepath.Dir(path) != l.LogDir() {
		t.Errorf("event file %s is not in %s", path, l.LogDir())
	}
	m := regexp.MustCompile(`^events\.out\.tfevents\.(\d{10})\.(.+)\.(\d+)\.(\d+)$`).FindStringSubmatch(filepath.Base(path))
	if m == nil {
		t.Fatalf("event file name %q does not match events.out.tfevents.<time>.<host>.<pid>.<n>", filepath.Base(path))
	}
	if m[1] != strconv.FormatInt(clock.t.Unix(), 10) {
		t.Errorf("time part %s, want %d", m[1], clock.t.Unix())
	}
	if m[2] != hostname() {
		t.Errorf("host part %q, want %q", m[2], hostname())
	}
	if m[3] != strconv.Itoa(os.Getpid()) {
		t.Errorf("pid part %s, want %d", m[3], os.Getpid())
	}
	if got := eventFileName(time.Unix(42, 0), "h", 7, 3); got != "events.out.tfevents.0000000042.h.7.3" {
		t.Errorf("eventFileName = %q", got)
	}
}

func TestLazyCreationAndFinalizeIdempotent(t *testing.T) {
	l, _ := newTestLogger(t, Config{})
	must(t, l.Save())
	must(t, l.Finalize(logger.StatusSuccess))
	if _, err := os.Stat(l.LogDir()); !os.IsNotExist(err) {
		t.Fatalf("log dir exists after Save/Finalize with nothing logged (stat err %v)", err)
	}
	must(t, l.LogHyperparams(map[string]any{"a": 1}))
	must(t, l.LogMetrics(map[string]float64{"x": 1}, 1))
	must(t, l.Finalize(logger.StatusSuccess))
	first := l.EventFile()
	info, err := os.Stat(first)
	must(t, err)
	must(t, l.Finalize(logger.StatusSuccess))
	again, err := os.Stat(first)
	must(t, err)
	if again.Size() != info.Size() {
		t.Errorf("second Finalize grew %s from %d to %d bytes", first, info.Size(), again.Size())
	}

	// Logging after Finalize starts a new file that again begins with
	// file_version; the session is not ended twice.
	must(t, l.LogMetrics(map[string]float64{"x": 2}, 2))
	must(t, l.Finalize(logger.StatusFailed))
	second := l.EventFile()
	if second == first {
		t.Fatalf("logging after Finalize reused %s", first)
	}
	events := readEvents(t, second)
	if get(t, events[0], "file_version").String() != fileVersion {
		t.Errorf("new file does not start with file_version: %s", jsonOf(events[0]))
	}
	if got := scalars(t, events); !slices.Equal(got, []scalar{{"x", 2, 2}}) {
		t.Errorf("new file scalars = %+v", got)
	}
	if n := len(pluginValues(t, events, hparamsPluginName)); n != 0 {
		t.Errorf("new file has %d hparams tags, want none", n)
	}
}

func TestBuffering(t *testing.T) {
	size := func(t *testing.T, l *Logger) int64 {
		t.Helper()
		info, err := os.Stat(l.EventFile())
		must(t, err)
		return info.Size()
	}
	tests := []struct {
		name      string
		cfg       Config
		advance   time.Duration // clock step before the second LogMetrics
		wantEmpty bool          // file still empty after two LogMetrics
	}{
		{"buffered until save", Config{FlushEvery: 100}, time.Second, true},
		{"flush every event", Config{FlushEvery: 1}, 0, false},
		{"flush at count", Config{FlushEvery: 3}, 0, false}, // file_version + 2 events
		{"flush interval", Config{FlushEvery: 100, FlushInterval: time.Minute}, time.Minute, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, clock := newTestLogger(t, tt.cfg)
			must(t, l.LogMetrics(map[string]float64{"a": 1}, 0))
			clock.t = clock.t.Add(tt.advance)
			must(t, l.LogMetrics(map[string]float64{"a": 2}, 1))
			if empty := size(t, l) == 0; empty != tt.wantEmpty {
				t.Fatalf("file empty = %v, want %v", empty, tt.wantEmpty)
			}
			must(t, l.Save())
			if got := scalars(t, readEvents(t, l.EventFile())); len(got) != 2 {
				t.Fatalf("after Save: %d scalars, want 2", len(got))
			}
		})
	}
}

func TestNewValidation(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"zero", Config{}, ""},
		{"negative version", Config{Version: intPtr(-1)}, "Config.Version"},
		{"negative flush", Config{FlushEvery: -1}, "Config.FlushEvery"},
		{"negative interval", Config{FlushInterval: -time.Second}, "Config.FlushInterval"},
		{"bad version name", Config{VersionName: "a/b"}, "VersionName"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.SaveDir = t.TempDir()
			err := New(tt.cfg).Validate()
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("New(…).Validate(): error %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestInvalidNames(t *testing.T) {
	l, _ := newTestLogger(t, Config{})
	if err := l.LogMetrics(map[string]float64{"": 1}, 0); err == nil {
		t.Error("LogMetrics with an empty name succeeded")
	}
	if err := l.LogText("", "x", 0); err == nil {
		t.Error("LogText with an empty tag succeeded")
	}
	if l.EventFile() != "" {
		t.Errorf("rejected calls created %s", l.EventFile())
	}
}
