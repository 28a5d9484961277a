package volt_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/voltml/volt"
	"github.com/voltml/volt/profiler"
)

// exEpochHook is a callback with one host hook, which the profiler times
// as "[Callback]exEpochHook.OnTrainEpochEnd".
type exEpochHook struct{}

func (exEpochHook) OnTrainEpochEnd(*volt.Trainer) error { return nil }

// Config.Profiler: "simple" prints Lightning's profiler table when each run
// ends and writes it to <log dir>/<stage>-profile.txt; CustomProfiler takes
// a configured one instead, here a profiler.Simple printing to a buffer.
// The example prints what does not depend on the machine: the table's
// title, and each action with its number of calls (2 epochs of 4 batches,
// one validation batch after the 2-batch sanity check and after each
// epoch; each wait for a batch, the loader's end included), not the times.
func ExampleConfig_profiler() {
	dir, _ := os.MkdirTemp("", "volt-example")
	defer os.RemoveAll(dir)
	var table bytes.Buffer
	simple := &profiler.Simple{Out: &table} // Config{Profiler: "simple"} prints to stderr
	t, err := volt.NewTrainer(exQuiet(volt.Config{MaxEpochs: 2, DefaultRootDir: dir, CustomProfiler: simple,
		Callbacks: []volt.Callback{exEpochHook{}}}))
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := t.Fit(context.Background(), exLine{}, exData()); err != nil {
		fmt.Println(err)
		return
	}

	title, _, _ := strings.Cut(table.String(), "\n")
	fmt.Println(title)
	rows := simple.Report() // by total time, longest first: sort by name to print
	slices.SortFunc(rows, func(a, b profiler.Row) int { return strings.Compare(a.Action, b.Action) })
	for _, r := range rows {
		fmt.Printf("%-45s %d\n", r.Action, r.Calls)
	}
	saved, err := os.ReadFile(filepath.Join(dir, "fit-profile.txt"))
	fmt.Println("fit-profile.txt is the printed table:", err == nil && bytes.Equal(saved, table.Bytes()))
	// Output:
	// FIT Profiler Report
	// [Callback]exEpochHook.OnTrainEpochEnd         2
	// [EvaluationLoop].val_next                     6
	// [TrainingEpochLoop].train_dataloader_next     10
	// compile_training_step                         1
	// log_metrics                                   6
	// run_training_batch                            8
	// run_training_epoch                            2
	// training_step                                 8
	// validation_step                               3
	// fit-profile.txt is the printed table: true
}
