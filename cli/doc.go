// Package cli turns a volt module and data module into a command-line
// program configured by flags, YAML files and the environment (Lightning's
// LightningCLI). Start with [Main] (or [Run], which returns the error):
//
//	func main() { cli.Main(NewMLP, NewMNIST) } // func() *MLP, func() *MNIST
//
//	mnist fit --config base.yaml --config small.yaml --trainer.max_epochs=5 --model.lr=3e-4
//	mnist test --config volt_logs/version_0/config.yaml --ckpt-path volt_logs/version_0/checkpoints/epoch=4-step=4300.ckpt
//	mnist print-config --config base.yaml > run.yaml
//	mnist export --onnx mnist.onnx --input-shape 784 volt_logs/version_0/checkpoints/epoch=4-step=4300.ckpt
//	mnist serve --input-shape 784 volt_logs/version_0/checkpoints/epoch=4-step=4300.ckpt
//
// # Subcommands
//
// fit trains (--ckpt-path resumes from a checkpoint); validate, test and
// predict run their loop (--ckpt-path loads the weights) and print each
// metric as name=value; print-config (or LightningCLI's "fit
// --print_config") prints the resolved config, every default written out
// as the run uses it (log_every_n_steps: 50, precision: 32-true), which
// --config reads back to the identical config. "PROGRAM fit --help" lists
// every key with its type and default.
//
// export writes the module's PredictStep with a checkpoint's weights as an
// ONNX model ([volt.ExportONNX]; Lightning's to_onnx): the module is built
// from the config as for predict, the checkpoint is the argument (or
// --ckpt-path), and --input-shape gives the dimensions after the batch axis,
// once per input of the batch ("784", "1,28,28"); --input-dtype (once for
// all or once per input; float32 by default), --input-name, --output-name
// and --batch-size (the batch traced) are optional. It prints one line: the
// file, the opset, the inputs and outputs with their shapes, and whether the
// batch axis is dynamic (else why not). The model goes to a temporary file
// in the same directory, linked into place when complete: a failed export
// leaves nothing, and an existing --onnx file is refused unless --overwrite.
//
// serve serves the module's PredictStep with a checkpoint's weights over
// HTTP (package serve) until SIGINT or SIGTERM, then lets the requests in
// flight finish and returns nil: the checkpoint is the argument (or
// --ckpt-path), --input-shape the input's dimensions after the batch axis
// (one input), --addr where to listen (127.0.0.1:8080), --max-batch and
// --wait how requests are batched into one Predict call, --max-rows and
// --max-body-bytes what one request may carry. POST /predict takes
// {"inputs": [ROW, …]} and answers {"outputs": [OUT, …]}.
//
// Keys follow Lightning's names
// (trainer.device_ids); trainer.shard_uneven takes pad_repeat, drop_tail or
// keep_uneven.
//
// # Keys
//
// The config is one YAML mapping:
//
//	seed_everything: 0          # volt.SeedEverything
//	trainer:                    # every volt.Config field, in snake case
//	  max_epochs: 5
//	  limit_train_batches: 100  # an integer is volt.Batches(100) ...
//	  limit_val_batches: 0.25   # ... a float is volt.Fraction(0.25); {batches: n} and {fraction: f} say it explicitly
//	  val_check_interval: 10m   # also a duration (volt.Every) or {across_epochs: n}
//	  num_sanity_val_steps: null  # a pointer field: null is nil
//	  precision: bf16-mixed
//	  callbacks:                # by name, each with its options (the fields of its Config struct, in snake case)
//	    - early_stopping: {monitor: val_loss, patience: 5}
//	    - model_checkpoint:
//	        monitor: val_loss
//	        save_top_k: 3
//	        train_time_interval: 30m
//	    - timer                 # a name alone keeps every default
//	  loggers: [csv, tensorboard]   # empty: volt's default CSV logger
//	model:                      # the module's exported fields
//	  lr: 0.001
//	data:                       # the data module's exported fields
//	  batch_size: 64
//	ckpt_path: ""
//
// Module and data-module fields are keyed by their name in snake case
// (HiddenSize → hidden_size) or by a `volt:"name"` tag; `volt:"-"` leaves a
// field out, `help:"…"` documents it in --help, a struct field becomes a
// section of its own. Fields of types a config cannot hold (functions,
// channels, interfaces, writers) are left out, and so are volt.Config's
// SummaryWriter and Log. A module or data module with a Validate() error
// method is checked after the config is read.
//
// # Where values come from
//
// Lowest first: the module's and Config's own defaults, the program's
// default configs (WithDefaultConfig), environment variables
// (VOLT_TRAINER_MAX_EPOCHS for trainer.max_epochs, VOLT_MODEL_LR for
// model.lr; WithEnvPrefix; a VOLT_TRAINER_, VOLT_MODEL_ or VOLT_DATA_
// variable that is no key is an error), the --config files in the order given, the
// flags in the order given (a flag wins over every file wherever it stands).
// A later value replaces an earlier one key by key; a list (callbacks,
// loggers) is replaced whole. Flags and environment variables are read as
// YAML ("--trainer.callbacks=[timer]", "--trainer.val_check_interval={across_epochs: 3}"),
// except for string keys, which take the text as is. Dashes and underscores
// are the same in flag names (--ckpt-path is --ckpt_path).
//
// # Errors
//
// Unknown keys, values of the wrong type and values volt rejects are
// reported together, each as an *Error naming the key, the file and line
// (or the flag or environment variable) and, for an unknown key or name,
// the nearest valid one:
//
//	a.yaml:2: trainer.max_epoch: unknown key; did you mean trainer.max_epochs?
//	a.yaml:4: trainer.limit_train_batches: Fraction must be in [0, 1], got 1.5
//	flag --trainer.max_epochs: want an integer, got "abc"
//
// The rules on values are volt's own (volt.NewTrainer and each callback's
// constructor); the package locates them.
//
// # The saved config
//
// Each run writes the resolved config as config.yaml into its log directory
// (the first logger's, volt_logs/version_N for the default logger; nothing
// is written when loggers are disabled): "fit --config
// volt_logs/version_N/config.yaml" runs it again as it was.
//
// # Libraries
//
// Flags are parsed by github.com/spf13/pflag (GNU-style --key=value and
// --key value, typed errors that name the unknown flag, usage text); YAML
// by gopkg.in/yaml.v3, whose nodes carry the line of every key and value.
package cli
