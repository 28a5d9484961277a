// Package statedict moves PyTorch state dicts in and out of volt models:
// it reads torch.save files (.pt, .pth, .bin, Lightning's .ckpt; the zip
// archive and the older pickle stream, unpickled in Go by
// github.com/nlpodyssey/gopickle, no Python needed) and safetensors files
// (Hugging Face's model.safetensors), loads them into a model's variables
// as torch's load_state_dict does, and saves a model's variables as a
// safetensors file that torch loads.
//
//	weights, err := statedict.Read("resnet18.pt")
//	...
//	func (m *Model) forward(scope *model.Scope, x *graph.Node) *graph.Node {
//		defer m.weights.Apply(scope) // torch's values for the layers below
//		...
//	}
//
// # Keys
//
// A variable's key is its path under the scope given, with "/" as ".":
// the variable "/layer1/0/conv1/weight" under the root scope is torch's
// "layer1.0.conv1.weight". Layers that name their variables as torch
// does (package nn's torch-named layers, package batchnorm) in scopes
// named as the torch module's attributes load a torch state dict as it
// is. GoMLX's own variables (names starting with "#", its random state)
// and volt's (under "/volt/": optimizer state, gradient accumulators,
// metric state) are not part of a state dict, so a volt model built at
// the step's root scope saves and loads just its weights and buffers.
//
// # Strictness
//
// [StateDict.Load] (variables that exist) and [StateDict.Apply] (during
// the trace, variables without a value) are strict by default: the
// model's keys the file lacks (missing), the file's keys the model lacks
// (unexpected) and tensors whose shape or dtype differ from their
// variable's make a [*LoadError] that lists all of them, with a hint when
// the keys differ by a prefix, and nothing is loaded. [NonStrict] is
// strict=False: what matches loads, the [Report] lists what was skipped;
// a shape mismatch is still an error. [StripPrefix], [AddPrefix] and
// [Rename] map the file's keys to the model's (torch.nn.GRU's
// "gru.weight_ih_l0" is nn.GRU's "gru.weight_ih": Rename with
// strings.TrimSuffix(key, "_l0")); [GPT2Conv1D] transposes
// Hugging Face GPT-2's Conv1D weights ([in, out]) into torch.nn.Linear's
// layout; [ConvertDTypes] loads a float16 or bfloat16 file into a float32
// model.
//
// # Saving
//
// [FromScope] collects a scope's variables under their keys and
// [StateDict.Save] writes a safetensors file (keys sorted, metadata
// {"format": "pt"}) that safetensors.torch.load_file, and so
// load_state_dict, reads; [SaveScope] does both.
package statedict
