// Command cli is the MNIST example (examples/mnist) as a command-line
// program built on package cli: the model's and data's fields, every
// trainer setting, callbacks and loggers come from configs/mnist.yaml (built
// in as the defaults), further --config files, flags and VOLT_* variables.
//
//	GOEXPERIMENT=simd go run ./examples/cli fit --trainer.max_epochs=1
//	GOEXPERIMENT=simd go run ./examples/cli test --ckpt-path volt_logs/version_0/checkpoints/last.ckpt
//	GOEXPERIMENT=simd go run ./examples/cli print-config --model.hidden='[512]'
//	GOEXPERIMENT=simd go run ./examples/cli export --onnx mnist.onnx --input-shape 784 volt_logs/version_0/checkpoints/epoch=0-val_acc=0.9612.ckpt
//	GOEXPERIMENT=simd go run ./examples/cli serve --input-shape 784 volt_logs/version_0/checkpoints/epoch=0-val_acc=0.9612.ckpt
//	GOEXPERIMENT=simd go run ./examples/cli fit --help
package main

import (
	_ "embed"
	"github.com/voltml/volt/examples/internal/digits"

	"github.com/voltml/volt/cli"
)

// defaults is configs/mnist.yaml.
//
//go:embed configs/mnist.yaml
var defaults []byte

func main() {
	cli.Main(digits.NewMLP, newMNIST, cli.WithDefaultConfig("configs/mnist.yaml", defaults))
}
