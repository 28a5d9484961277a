package engine

import (
	"strings"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
)

// noHalf is a backend that claims no Float16 support.
type noHalf struct{ compute.Backend }

func (b noHalf) Capabilities() compute.Capabilities {
	c := b.Backend.Capabilities().Clone()
	delete(c.DTypes, dtypes.Float16)
	return c
}

func TestPrecisionCheckBackend(t *testing.T) {
	goBackend, err := Backend("go")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range Precisions {
		if err := p.CheckBackend(goBackend); err != nil {
			t.Errorf("%s on the go backend: %v", p, err)
		}
	}
	err = Precision16M.CheckBackend(noHalf{goBackend})
	if err == nil || !strings.Contains(err.Error(), `precision "16-mixed" computes in Float16, which the backend "go" does not support`) {
		t.Errorf("error = %v", err)
	}
	if _, err := ParsePrecision("fp8"); err == nil || !strings.Contains(err.Error(), `"bf16-mixed"`) {
		t.Errorf("ParsePrecision(fp8) = %v", err)
	}
}
