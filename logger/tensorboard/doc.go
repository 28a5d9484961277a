// Package tensorboard implements a [logger.Logger] that writes TensorBoard
// event files, like PyTorch Lightning's TensorBoardLogger.
//
// Files are laid out as
//
//	SaveDir/Name/version_N/events.out.tfevents.<unix time>.<host>.<pid>.<n>
//
// with the versioning rules of the CSV logger, so that loggers given the
// same [logger.VersionDir] share one directory. Each file is a sequence of
// TFRecords holding serialized tensorflow.Event messages: a file_version
// record, one event per LogMetrics call with simple_value scalars, text
// summaries from [Logger.LogText], and the HParams plugin's experiment,
// session-start and session-end summaries for the hyperparameters.
//
// Hyperparameters are flattened as Lightning does: nested string-keyed maps
// become "outer/inner" names; bools stay bools, numbers become float64,
// strings stay strings, nil values are dropped and anything else (slices,
// structs) is written as its JSON text. Unlike Lightning's logger, no
// hparams.yaml is written: pair it with the CSV or JSONL logger for that.
//
// The protocol buffers are encoded by hand with protowire; the message and
// field numbers come from TensorFlow's event.proto, summary.proto,
// tensor.proto, tensor_shape.proto and types.proto, TensorBoard's hparams
// plugin_data.proto and api.proto, and google/protobuf/struct.proto. Copies
// of the definitions used are kept under testdata/proto, where the tests
// compile them to decode what the logger writes.
package tensorboard
