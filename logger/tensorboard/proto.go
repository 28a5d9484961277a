package tensorboard

import (
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers of tensorflow.Event (tensorflow/core/util/event.proto).
const (
	eventWallTime    protowire.Number = 1 // double
	eventStep        protowire.Number = 2 // int64
	eventFileVersion protowire.Number = 3 // string, oneof what
	eventSummary     protowire.Number = 5 // Summary, oneof what
)

// Field numbers of tensorflow.Summary, Summary.Value and SummaryMetadata
// (tensorflow/core/framework/summary.proto).
const (
	summaryValue         protowire.Number = 1 // Summary.value: repeated Value
	valueTag             protowire.Number = 1 // Value.tag: string
	valueSimpleValue     protowire.Number = 2 // Value.simple_value: float, oneof value
	valueTensor          protowire.Number = 8 // Value.tensor: TensorProto, oneof value
	valueMetadata        protowire.Number = 9 // Value.metadata: SummaryMetadata
	metadataPluginData   protowire.Number = 1 // SummaryMetadata.plugin_data: PluginData
	metadataDataClass    protowire.Number = 4 // SummaryMetadata.data_class: DataClass
	pluginDataPluginName protowire.Number = 1 // PluginData.plugin_name: string
	pluginDataContent    protowire.Number = 2 // PluginData.content: bytes
)

// Field numbers of tensorflow.TensorProto (tensorflow/core/framework/tensor.proto).
const (
	tensorDtype     protowire.Number = 1 // dtype: DataType
	tensorShape     protowire.Number = 2 // tensor_shape: TensorShapeProto
	tensorStringVal protowire.Number = 8 // string_val: repeated bytes
)

// Enum values used.
const (
	dataClassTensor uint64 = 2 // DataClass.DATA_CLASS_TENSOR (summary.proto)
	dtString        uint64 = 7 // DataType.DT_STRING (types.proto)
)

// fileVersion is the file_version of the first event of every file.
const fileVersion = "brain.Event:2"

// textPluginName is the text plugin's name in SummaryMetadata.
const textPluginName = "text"

// appendDouble appends a double field.
func appendDouble(b []byte, num protowire.Number, v float64) []byte {
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, math.Float64bits(v))
}

// appendFloat appends a float field.
func appendFloat(b []byte, num protowire.Number, v float32) []byte {
	b = protowire.AppendTag(b, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, math.Float32bits(v))
}

// appendVarint appends an integer, enum or bool field.
func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// appendBytes appends a string, bytes or embedded message field.
func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// appendString appends a string field.
func appendString(b []byte, num protowire.Number, v string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, v)
}

// eventHeader returns an Event's wall_time and step fields; proto3 omits
// zero values.
func eventHeader(wallTime float64, step int64) []byte {
	var b []byte
	if wallTime != 0 {
		b = appendDouble(b, eventWallTime, wallTime)
	}
	if step != 0 {
		b = appendVarint(b, eventStep, uint64(step))
	}
	return b
}

// fileVersionEvent encodes the Event that starts every event file.
func fileVersionEvent(wallTime float64) []byte {
	return appendString(eventHeader(wallTime, 0), eventFileVersion, fileVersion)
}

// summaryEvent encodes an Event holding a Summary of the given encoded
// Summary.Value messages.
func summaryEvent(wallTime float64, step int64, values ...[]byte) []byte {
	var summary []byte
	for _, v := range values {
		summary = appendBytes(summary, summaryValue, v)
	}
	return appendBytes(eventHeader(wallTime, step), eventSummary, summary)
}

// scalarValue encodes a Summary.Value with a simple_value. The oneof field
// is written even when zero so that its presence survives.
func scalarValue(tag string, v float32) []byte {
	return appendFloat(appendString(nil, valueTag, tag), valueSimpleValue, v)
}

// summaryMetadata encodes a SummaryMetadata naming plugin with content;
// dataClass 0 (DATA_CLASS_UNKNOWN) is omitted.
func summaryMetadata(plugin string, content []byte, dataClass uint64) []byte {
	pd := appendString(nil, pluginDataPluginName, plugin)
	if len(content) > 0 {
		pd = appendBytes(pd, pluginDataContent, content)
	}
	b := appendBytes(nil, metadataPluginData, pd)
	if dataClass != 0 {
		b = appendVarint(b, metadataDataClass, dataClass)
	}
	return b
}

// textValue encodes a Summary.Value for the text plugin: a rank-0 DT_STRING
// tensor holding text, with metadata carrying an empty TextPluginData
// (version 0 encodes to no bytes), as TensorBoard's text summary writes it.
func textValue(tag, text string) []byte {
	tensor := appendVarint(nil, tensorDtype, dtString)
	tensor = appendBytes(tensor, tensorShape, nil) // scalar: no dims
	tensor = appendString(tensor, tensorStringVal, text)
	b := appendString(nil, valueTag, tag)
	b = appendBytes(b, valueMetadata, summaryMetadata(textPluginName, nil, dataClassTensor))
	return appendBytes(b, valueTensor, tensor)
}
