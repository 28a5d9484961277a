// Package resumeprop proves resume as a property: for generated, seeded
// training configurations (clipping by norm and by value, step and plateau
// schedulers, accumulation, EMA and SWA, metric objects, step- and
// epoch-cadence ModelCheckpoint, validation intervals, several epochs) a run
// interrupted at a chosen hook and batch — an error or a panic in a
// callback, or a real SIGKILL of the training process — and resumed with
// FromCheckpoint("last") in a new trainer (a new process after a SIGKILL)
// must end exactly as the uninterrupted run does: every checkpoint's
// tensors and trainer state, and every row the CSV and TensorBoard loggers
// received, bitwise.
//
// Scenario, Generate and Run are the generator and the training program;
// the property test (resume_property_test.go) runs them in process, in
// child processes it kills, and on 2 MPI ranks through the trainee command.
package resumeprop
