package callback

import (
	"math"
	"strings"
	"testing"
)

func TestFilenameTemplate(t *testing.T) {
	values := map[string]float64{"epoch": 3, "step": 120, "val_loss": 0.123456, "val/acc": 0.5, "big": 1234.5, "nan": math.NaN()}
	tests := []struct {
		tmpl    string
		noNames bool
		want    string
	}{
		{"{epoch}-{step}", false, "epoch=3-step=120"},
		{"{epoch}-{step}", true, "3-120"},
		{"{val_loss}", false, "val_loss=0.1235"},
		{"{val_loss:.2f}", false, "val_loss=0.12"},
		{"{val_loss:.3e}", false, "val_loss=1.235e-01"},
		{"{val_loss:.3}", false, "val_loss=0.123"},
		{"{val/acc:.4f}", false, "val_acc=0.5000"},
		{"{val/acc:.1f}", true, "0.5"},
		{"{epoch:03d}", false, "epoch=003"},
		{"{epoch:03}", false, "epoch=003"},
		{"{step:.1f}", false, "step=120.0"},
		{"{big:08.1f}", false, "big=001234.5"},
		{"{missing}", false, "missing=0.0000"},
		{"{nan}", false, "nan=NaN"},
		{"best-{ epoch }", false, "best-epoch=3"},
		{"plain", false, "plain"},
		{"a}b", false, "a}b"},
	}
	for _, tc := range tests {
		t.Run(tc.tmpl, func(t *testing.T) {
			ft, err := parseFilename(tc.tmpl, !tc.noNames)
			if err != nil {
				t.Fatal(err)
			}
			if got := ft.render(values); got != tc.want {
				t.Errorf("render(%q) = %q, want %q", tc.tmpl, got, tc.want)
			}
		})
	}
}

func TestFilenameTemplateErrors(t *testing.T) {
	tests := []struct{ tmpl, want string }{
		{"{epoch", `unclosed "{epoch"`},
		{"{}", "needs a metric name"},
		{"{:.2f}", "needs a metric name"},
		{"{val_loss:>8}", `unsupported format spec ">8"; valid: [0][width][.precision][d|f|e|E|g|G]`},
		{"{val_loss:.2x}", `unsupported format spec ".2x"`},
		{"{epoch:.2d}", "an integer (d) takes no precision"},
	}
	for _, tc := range tests {
		t.Run(tc.tmpl, func(t *testing.T) {
			_, err := parseFilename(tc.tmpl, true)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("parseFilename(%q) error = %v, want it to contain %q", tc.tmpl, err, tc.want)
			}
		})
	}
}
