// Package killtest holds the crash test of volt's checkpointing: it kills a
// training process (the trainee command) with SIGKILL at random moments,
// often in the middle of a checkpoint save, resumes it from its last
// checkpoint each time, and checks that the final weights are bitwise equal
// to those of a run that was never interrupted. The package has no API; see
// killtest_test.go.
package killtest
