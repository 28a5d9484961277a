// Package callback holds volt's built-in callbacks, Lightning's set written
// for volt's hook interfaces. Each one is a pointer built by its constructor,
// implements only the hooks it listens to, and resets its per-run state when
// a run starts; the stateful ones implement volt.Stateful so a checkpoint
// carries them. The constructors return no error: volt.NewTrainer reports a
// bad field, naming the callback and the field, as the callback's Validate
// does.
//
//	EarlyStopping                  stops Fit when a monitored metric stops improving
//	ModelSummary                   prints the model's variables, grouped by scope
//	Timer                          stops Fit after a wall-clock budget; times each stage
//	ProgressBar                    Lightning's TQDM bars on a terminal, plain lines elsewhere
//	ThroughputMonitor              logs batches/s, samples/s (and items/s) per epoch
//	DeviceStatsMonitor             logs process CPU time and Go memory per epoch
//	PredictionWriter               writes Predict's outputs as JSON files
//	LearningRateMonitor            logs each optimizer's learning rate (and momentum, weight decay)
//	GradientAccumulationScheduler  changes AccumulateGradBatches by epoch
//	ModelCheckpoint                saves checkpoints on a cadence, keeps the top k, writes last.ckpt
//	OnExceptionCheckpoint          saves a resumable checkpoint when a run fails or is interrupted
//	Finetuning, BackboneFinetuning freeze variables (by scope or PyTorch name) and unfreeze them at chosen epochs
//	StochasticWeightAveraging      averages the weights of the last epochs, with an annealed LR
//	EMAWeightAveraging             keeps an exponential moving average of the weights
//
// Add a callback by listing it in volt.Config.Callbacks; leave it out to turn
// it off. Most runs start with [NewModelCheckpoint] and [NewEarlyStopping];
// every callback has a runnable example. The trainer itself prints a model summary when Fit starts,
// keeps the latest epoch's checkpoint and shows a progress bar
// (Config.DisableModelSummary, Config.DisableCheckpointing,
// Config.EnableProgressBar); ModelSummary, ModelCheckpoint and ProgressBar
// replace those defaults.
//
// # Adding a callback to this package
//
// A callback built from a configuration embeds configured (with its Config
// type) and its constructor calls newCallback (configured.go); its hooks are
// volt's interfaces (volt's hooks.go). It is also listed in package cli's
// builtinRegistry (cli/registry.go) under Lightning's class name in snake
// case, so that a config file can name it: cli's
// TestEveryConstructorIsRegistered fails until it is. Give it a runnable
// example and add it to the list above.
package callback
