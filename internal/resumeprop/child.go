package resumeprop

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/voltml/volt"
)

// Child runs one part of an interrupted run in its own process, as the
// trainee command and the property test's re-executed binary do:
//
//	-scenario FILE  the Scenario as JSON (required)
//	-root DIR       the run's root directory (required)
//	-resume         resume from FromCheckpoint("last")
//	-crash N        apply the scenario's crash N (-1: none)
//	-announce       write "STEP <rank> <processed> <pid>" lines to stdout
//	-pause D        sleep D after each announced batch
//
// It prints "DONE <rank>" when Fit returns without error and returns the
// process's exit status (volt.ExitCode of Fit's error).
func Child(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("resumeprop", flag.ContinueOnError)
	fs.SetOutput(stderr)
	scPath := fs.String("scenario", "", "the Scenario as JSON (required)")
	root := fs.String("root", "", "the run's root directory (required)")
	resume := fs.Bool("resume", false, "resume from FromCheckpoint(\"last\")")
	crash := fs.Int("crash", -1, "apply the scenario's crash N (-1: none)")
	announce := fs.Bool("announce", false, "announce every training batch end on stdout")
	pause := fs.Duration("pause", 0, "sleep this long after each announced batch")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *scPath == "" || *root == "" {
		fmt.Fprintln(stderr, "resumeprop: -scenario and -root are required")
		return 2
	}
	raw, err := os.ReadFile(*scPath)
	if err != nil {
		fmt.Fprintln(stderr, "resumeprop:", err)
		return 2
	}
	var sc Scenario
	if err := json.Unmarshal(raw, &sc); err != nil {
		fmt.Fprintf(stderr, "resumeprop: %s: %v\n", *scPath, err)
		return 2
	}
	o := Options{Resume: *resume, Pause: *pause}
	if *crash >= 0 {
		if *crash >= len(sc.Crashes) {
			fmt.Fprintf(stderr, "resumeprop: -crash %d: the scenario has %d crashes\n", *crash, len(sc.Crashes))
			return 2
		}
		o.Crash = &sc.Crashes[*crash]
	}
	if *announce {
		o.Announce = stdout
	}
	t, err := Run(context.Background(), sc, *root, o)
	if err != nil {
		fmt.Fprintln(stderr, "resumeprop:", err)
		return max(volt.ExitCode(err), 1)
	}
	fmt.Fprintln(stdout, "DONE", t.GlobalRank())
	return 0
}
