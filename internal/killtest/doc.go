// Package killtest holds the crash tests of volt's checkpointing and
// logging. TestSIGKILLResumesBitwise kills a training process (the trainee
// command) with SIGKILL at random moments, often in the middle of a
// checkpoint save, resumes it from its last checkpoint each time, and checks
// that the final weights are bitwise equal to those of a run that was never
// interrupted. TestSIGKILLKeepsEveryLoggedRowOnce does the same to userprog,
// a program written from the README against the public API only, and checks
// that its CSV and TensorBoard logs (read back with an independent decoder)
// hold every row of an uninterrupted run exactly once, in one version
// directory; TestProgramsStartedAtOnceGetTheirOwnVersion starts several
// copies of it at once on one log root. The package has no API.
package killtest
