package volt

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// ExitOnError ends a program's main the way an uncaught exception ends a
// Lightning script, so that main checks each step in one line instead of
// returning errors to a caller:
//
//	trainer, err := volt.NewTrainer(cfg)
//	volt.ExitOnError(err)
//	volt.ExitOnError(trainer.Fit(ctx, model, dm))
//
// A nil err returns. flag.ErrHelp (the flag package printed the usage
// after -h) exits 0. Any other error is printed on stderr as
// "PROGRAM: err" (PROGRAM is the executable's base name) and the process
// exits with ExitCode(err): 130 after a Ctrl-C that Config.HandleSignals
// turned into an InterruptedError, RequeueExitCode after SIGUSR1, 1
// otherwise. Like os.Exit it runs no deferred function: call it where
// nothing deferred must still run (Fit has flushed the loggers and closed
// its files by the time it returns).
func ExitOnError(err error) {
	if code, exit := exitMessage(err, programName(), os.Stderr); exit {
		os.Exit(code)
	}
}

// exitMessage is ExitOnError without the exit: it writes the error's line
// on w when there is one, and says whether to exit and with what status.
func exitMessage(err error, program string, w io.Writer) (code int, exit bool) {
	switch {
	case err == nil:
		return 0, false
	case errors.Is(err, flag.ErrHelp):
		return 0, true
	}
	fmt.Fprintf(w, "%s: %v\n", program, err)
	return ExitCode(err), true
}

// programName is the executable's name as a shell user typed it: the
// base name of os.Args[0], without Windows's ".exe".
func programName() string {
	return strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe")
}
