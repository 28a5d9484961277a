package volt_test

import (
	"log/slog"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// boring is the shared test model (internal/testutil.Boring).
type boring = testutil.Boring

// regression returns n examples of y = x·w + 0.5 with 8 features.
func regression(n int, seed uint64) data.Slice { return testutil.Regression(n, seed) }

// boringData returns 4 training batches of 16, 1 validation batch of 16 and
// 2 test/predict batches of 8.
func boringData() volt.Loaders { return testutil.BoringData() }

// quiet returns a config that writes no logs and no files.
func quiet(cfg volt.Config) volt.Config {
	cfg.DisableLoggers = true
	cfg.DisableModelSummary = true
	cfg.Log = slog.New(slog.DiscardHandler)
	if cfg.EnableProgressBar == nil {
		cfg.EnableProgressBar = volt.Ptr(false) // no default bar's lines in the test output
	}
	return cfg
}

// mustValidateTestPredict runs Validate, Test and Predict of m over dm with
// tr, failing t on an error.
func mustValidateTestPredict(t *testing.T, tr *volt.Trainer, m volt.Module, dm volt.DataModule) {
	t.Helper()
	if _, err := tr.Validate(t.Context(), m, dm); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Test(t.Context(), m, dm); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Predict(t.Context(), m, dm); err != nil {
		t.Fatal(err)
	}
}
