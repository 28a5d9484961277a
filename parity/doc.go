// Package parity checks a volt model against PyTorch step by step: PyTorch
// writes a case file (its initial weights, the batches it trained on, its
// loss at every step and its weights after the last), volt starts from the
// same weights, trains on the same batches with the same optimizer,
// clipping and schedule, and the losses and the trained weights must agree.
//
// A case file is a safetensors file (written by tools/parity/torch_parity.py,
// read by [Read] with github.com/nlpodyssey/safetensors):
//
//	params/<variable path>  the model's initial weights, under the GoMLX
//	                        paths the Go model gives them, in GoMLX's layout
//	x, y, ...               the batches, stacked along axis 0 in training order
//	loss                    PyTorch's loss before each step, float64
//	trained/<variable path> the weights after the last step, as params/
//	after/<variable path>   other state after the last step (buffers:
//	                        BatchNorm's running statistics)
//
// A Go model loads the weights the way torchinit initialises: one deferred
// line in the function that builds its layers,
//
//	defer weights.Apply(scope)
//
// ([Tensors.Apply]) which gives every variable under scope that has no value yet the file's
// tensor, and panics, naming the variable, when the file has none or its
// shape differs. [Tensors.Examples] splits the batches into a data.Slice
// for a DataLoader without shuffling, [Losses] records the loss of every
// training step, and [Compare] reports the steps whose losses differ.
//
// The cases live in parity/testdata: tools/parity/mlp.py writes the MLP's,
// lstm.py the LSTM's, cnn.py the CNN's, layernorm.py the LayerNorm net's,
// chargpt.py the character transformer's (examples/chargpt/gpt), seqclass.py
// the LSTM sequence classifier's (examples/seqclass/classifier), resnet.py
// the ResNet's (examples/resnet/resnet), autoencoder.py the autoencoder's
// (examples/autoencoder/ae), cnn_mnist.py examples/cnn's network's
// (examples/cnn/cnn, in float64), dcgan_disc.py a DCGAN-style
// discriminator's (even kernels, whose input gradient internal/convgrad
// corrects). lstm.py also writes nn.GRU's case. A new zoo model adds its PyTorch
// script beside them (the layout converters of torch_parity.py map
// nn.Linear, nn.Conv2d, nn.LayerNorm, nn.Embedding and nn.LSTM to GoMLX's variables, nn.GRU to volt's), a
// Go test like TestMLPParity, and its files to the test's caseScripts,
// which TestCasesAreCurrent reruns where torch is installed.
package parity
