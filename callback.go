package volt

// Callback is any value that implements one or more of the hook interfaces
// (OnTrainEpochEnd, OnValidationBatchEnd, …). There is no base type with every
// method: a callback says what it listens to by the methods it has, and the
// trainer rejects a callback that implements none.
type Callback any

// CallbackValidator is implemented by callbacks and loggers whose
// configuration may be bad (package callback's and tensorboard.New's, whose
// constructors return no error): NewTrainer calls Validate on each of
// Config.Callbacks and Config.Loggers and reports an error as
// Config.Callbacks[i] (or Config.Loggers[i]) (its type): the error.
type CallbackValidator interface{ Validate() error }

// Stateful is implemented by callbacks whose state must survive a checkpoint
// and resume. StateKey must be stable and unique among the trainer's
// callbacks (include the settings that distinguish two instances).
type Stateful interface {
	StateKey() string
	State() ([]byte, error)
	LoadState(state []byte) error
}

// FastDevRunSkipped is implemented by callbacks that Config.FastDevRun turns
// off (checkpointing, early stopping): the trainer does not call them then.
type FastDevRunSkipped interface {
	SkippedInFastDevRun()
}

// MetricMonitor is implemented by callbacks that act on a monitored metric
// (EarlyStopping). Their OnTrainEpochEnd runs after the module's, as a
// Checkpointer's does, so that they see what the module logs there
// (Lightning's monitoring callbacks).
type MetricMonitor interface {
	MonitorsMetric()
}
