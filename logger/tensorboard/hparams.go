package tensorboard

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/voltml/volt/logger"
	"google.golang.org/protobuf/encoding/protowire"
)

// HParams plugin names and tags (tensorboard/plugins/hparams/metadata.py).
const (
	hparamsPluginName = "hparams"
	experimentTag     = "_hparams_/experiment"
	sessionStartTag   = "_hparams_/session_start_info"
	sessionEndTag     = "_hparams_/session_end_info"
)

// Field numbers of tensorboard.hparams messages
// (tensorboard/plugins/hparams/plugin_data.proto and api.proto).
const (
	pluginDataExperiment   protowire.Number = 2 // HParamsPluginData.experiment
	pluginDataSessionStart protowire.Number = 3 // HParamsPluginData.session_start_info
	pluginDataSessionEnd   protowire.Number = 4 // HParamsPluginData.session_end_info
	startHparams           protowire.Number = 1 // SessionStartInfo.hparams: map<string, Value>
	startTimeSecs          protowire.Number = 5 // SessionStartInfo.start_time_secs: double
	endStatus              protowire.Number = 1 // SessionEndInfo.status: Status
	endTimeSecs            protowire.Number = 2 // SessionEndInfo.end_time_secs: double
	experimentTimeCreated  protowire.Number = 3 // Experiment.time_created_secs: double
	experimentHparamInfos  protowire.Number = 4 // Experiment.hparam_infos: repeated HParamInfo
	experimentMetricInfos  protowire.Number = 5 // Experiment.metric_infos: repeated MetricInfo
	hparamInfoName         protowire.Number = 1 // HParamInfo.name: string
	hparamInfoType         protowire.Number = 4 // HParamInfo.type: DataType
	metricInfoName         protowire.Number = 1 // MetricInfo.name: MetricName
	metricNameTag          protowire.Number = 2 // MetricName.tag: string
	mapEntryKey            protowire.Number = 1 // map entry key
	mapEntryValue          protowire.Number = 2 // map entry value
)

// Field numbers of google.protobuf.Value (google/protobuf/struct.proto).
const (
	structNumberValue protowire.Number = 2 // double, oneof kind
	structStringValue protowire.Number = 3 // string, oneof kind
	structBoolValue   protowire.Number = 4 // bool, oneof kind
)

// hparamType is tensorboard.hparams.DataType (api.proto).
type hparamType uint64

// DataType values.
const (
	typeString  hparamType = 1 // DATA_TYPE_STRING
	typeBool    hparamType = 2 // DATA_TYPE_BOOL
	typeFloat64 hparamType = 3 // DATA_TYPE_FLOAT64
)

// Status values of tensorboard.hparams.Status (api.proto).
const (
	statusUnknown uint64 = 0 // STATUS_UNKNOWN
	statusSuccess uint64 = 1 // STATUS_SUCCESS
	statusFailure uint64 = 2 // STATUS_FAILURE
)

// sessionStatus maps a Finalize status to a session status: "success" to
// STATUS_SUCCESS, "failed" to STATUS_FAILURE, and "interrupted" (or an
// invalid status) to STATUS_UNKNOWN, since the run neither finished nor
// failed.
func sessionStatus(status string) uint64 {
	switch status {
	case logger.StatusSuccess:
		return statusSuccess
	case logger.StatusFailed:
		return statusFailure
	}
	return statusUnknown
}

// hparam is one flattened hyperparameter as the HParams plugin stores it.
type hparam struct {
	name string
	typ  hparamType
	num  float64
	str  string
	b    bool
}

// flattenHparams flattens nested string-keyed maps into "outer/inner"
// names, as Lightning's TensorBoardLogger does, and converts each leaf:
// bools stay bools, numbers become float64, strings stay strings, nils are
// dropped and anything else (slices, structs, ...) is written as its JSON
// text (or fmt's %v when it has none). The result is sorted by name.
func flattenHparams(params map[string]any) []hparam {
	var out []hparam
	flattenInto(&out, "", reflect.ValueOf(params))
	slices.SortFunc(out, func(a, b hparam) int { return strings.Compare(a.name, b.name) })
	return out
}

// flattenInto appends the leaves of v under prefix.
func flattenInto(out *[]hparam, prefix string, v reflect.Value) {
	for v.IsValid() && (v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer) {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if !v.IsValid() {
		return
	}
	if v.Kind() == reflect.Map && v.Type().Key().Kind() == reflect.String {
		keys := stringKeys(v)
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			name := k
			if prefix != "" {
				name = prefix + "/" + k
			}
			flattenInto(out, name, v.MapIndex(keys[k]))
		}
		return
	}
	h := hparam{name: prefix}
	switch v.Kind() {
	case reflect.Bool:
		h.typ, h.b = typeBool, v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		h.typ, h.num = typeFloat64, float64(v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		h.typ, h.num = typeFloat64, float64(v.Uint())
	case reflect.Float32, reflect.Float64:
		h.typ, h.num = typeFloat64, v.Float()
	case reflect.String:
		h.typ, h.str = typeString, v.String()
	default:
		h.typ, h.str = typeString, textOf(v.Interface())
	}
	*out = append(*out, h)
}

// stringKeys maps each key of the string-keyed map v to its reflect value.
func stringKeys(v reflect.Value) map[string]reflect.Value {
	keys := make(map[string]reflect.Value, v.Len())
	for _, k := range v.MapKeys() {
		keys[k.String()] = k
	}
	return keys
}

// textOf renders a non-scalar hyperparameter as JSON, or with %v when it
// cannot be encoded as JSON.
func textOf(x any) string {
	if data, err := json.Marshal(x); err == nil {
		return string(data)
	}
	return fmt.Sprintf("%v", x)
}

// structValue encodes h's value as a google.protobuf.Value. The oneof field
// is written even when it holds the zero value.
func (h hparam) structValue() []byte {
	switch h.typ {
	case typeBool:
		return appendVarint(nil, structBoolValue, protowire.EncodeBool(h.b))
	case typeFloat64:
		return appendDouble(nil, structNumberValue, h.num)
	}
	return appendString(nil, structStringValue, h.str)
}

// hparamsValue encodes a Summary.Value with tag whose metadata carries an
// HParamsPluginData (version 0, omitted) with field num set to data.
func hparamsValue(tag string, num protowire.Number, data []byte) []byte {
	content := appendBytes(nil, num, data)
	b := appendString(nil, valueTag, tag)
	return appendBytes(b, valueMetadata, summaryMetadata(hparamsPluginName, content, 0))
}

// sessionStartValue encodes the session_start_info summary value holding
// hps.
func sessionStartValue(hps []hparam, startSecs float64) []byte {
	var ssi []byte
	for _, h := range hps {
		entry := appendString(nil, mapEntryKey, h.name)
		entry = appendBytes(entry, mapEntryValue, h.structValue())
		ssi = appendBytes(ssi, startHparams, entry)
	}
	if startSecs != 0 {
		ssi = appendDouble(ssi, startTimeSecs, startSecs)
	}
	return hparamsValue(sessionStartTag, pluginDataSessionStart, ssi)
}

// experimentValue encodes the experiment summary value declaring hps and
// the metric tags.
func experimentValue(hps []hparam, metricTags []string, createdSecs float64) []byte {
	var exp []byte
	if createdSecs != 0 {
		exp = appendDouble(exp, experimentTimeCreated, createdSecs)
	}
	for _, h := range hps {
		info := appendString(nil, hparamInfoName, h.name)
		info = appendVarint(info, hparamInfoType, uint64(h.typ))
		exp = appendBytes(exp, experimentHparamInfos, info)
	}
	for _, tag := range metricTags {
		name := appendString(nil, metricNameTag, tag)
		exp = appendBytes(exp, experimentMetricInfos, appendBytes(nil, metricInfoName, name))
	}
	return hparamsValue(experimentTag, pluginDataExperiment, exp)
}

// sessionEndValue encodes the session_end_info summary value.
func sessionEndValue(status uint64, endSecs float64) []byte {
	var sei []byte
	if status != 0 {
		sei = appendVarint(sei, endStatus, status)
	}
	if endSecs != 0 {
		sei = appendDouble(sei, endTimeSecs, endSecs)
	}
	return hparamsValue(sessionEndTag, pluginDataSessionEnd, sei)
}
