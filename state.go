package volt

// Stage is what a run was asked to do: the argument of Setup and Teardown.
type Stage string

// The stages of Trainer's entry points.
const (
	StageFit      Stage = "fit"
	StageValidate Stage = "validate"
	StageTest     Stage = "test"
	StagePredict  Stage = "predict"
)

// RunningStage is what the trainer is doing at the moment.
type RunningStage string

// The running stages.
const (
	RunningTrain       RunningStage = "train"
	RunningSanityCheck RunningStage = "sanity_check"
	RunningValidate    RunningStage = "validate"
	RunningTest        RunningStage = "test"
	RunningPredict     RunningStage = "predict"
)

// Status is the trainer's lifecycle status.
type Status string

// The statuses a trainer goes through.
const (
	StatusInitializing Status = "initializing"
	StatusRunning      Status = "running"
	StatusFinished     Status = "finished"
	StatusInterrupted  Status = "interrupted"
	StatusFailed       Status = "failed"
)

// State is the trainer's current function, stage and status.
type State struct {
	Fn     Stage
	Stage  RunningStage
	Status Status
}
