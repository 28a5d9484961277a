package data_test

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/voltml/volt/data"
)

// randnGoldens is testdata/randn/goldens.json, written by
// gen_randn_goldens.py from torch 1.13.
type randnGoldens struct {
	Cases []struct {
		Seed  uint64
		Draws []struct {
			Rows, Cols int
			SHA256     string
			Bits       []uint32
		}
	}
}

// TestGeneratorRandnMatchesTorch: every draw, in sequence from one seed, is
// torch.randn's bit for bit: the float32 Box-Muller of 16 values or more
// (with a redrawn tail), the float64 one of small draws and its value
// cached for the next, and the seed's low 32 bits.
func TestGeneratorRandnMatchesTorch(t *testing.T) {
	raw, err := os.ReadFile("testdata/randn/goldens.json")
	if err != nil {
		t.Fatal(err)
	}
	var goldens randnGoldens
	if err := json.Unmarshal(raw, &goldens); err != nil {
		t.Fatal(err)
	}
	for _, c := range goldens.Cases {
		g := data.NewGenerator(c.Seed)
		for i, d := range c.Draws {
			name := fmt.Sprintf("seed %d draw %d (%d×%d)", c.Seed, i, d.Rows, d.Cols)
			rows := g.Randn(d.Rows, d.Cols)
			if len(rows) != d.Rows {
				t.Fatalf("%s: %d rows", name, len(rows))
			}
			var bits []uint32
			b := make([]byte, 0, 4*d.Rows*d.Cols)
			for _, r := range rows {
				if len(r) != d.Cols {
					t.Fatalf("%s: a row of %d values", name, len(r))
				}
				for _, v := range r {
					bits = append(bits, math.Float32bits(v))
					b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
				}
			}
			if d.Bits != nil && !slices.Equal(bits, d.Bits) {
				t.Errorf("%s: bits %v, torch's %v", name, bits, d.Bits)
			}
			if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != d.SHA256 {
				t.Errorf("%s: values differ from torch's (SHA-256 %x, want %s); first %v", name, sum, d.SHA256, rows[0][:min(4, d.Cols)])
			}
		}
	}
}

// TestGeneratorRandnSizes: an empty draw has no rows (or empty rows), and a
// negative size panics naming the sizes.
func TestGeneratorRandnSizes(t *testing.T) {
	g := data.NewGenerator(0)
	for _, tc := range []struct{ rows, cols, wantRows int }{{0, 8, 0}, {3, 0, 3}} {
		got := g.Randn(tc.rows, tc.cols)
		if len(got) != tc.wantRows || (len(got) > 0 && len(got[0]) != 0) {
			t.Errorf("Randn(%d, %d) = %v, want %d empty rows", tc.rows, tc.cols, got, tc.wantRows)
		}
	}
	for _, size := range [][2]int{{-1, 2}, {2, -1}} {
		func() {
			defer func() {
				if r, _ := recover().(string); !strings.Contains(r, fmt.Sprintf("Randn(%d, %d): a size is negative", size[0], size[1])) {
					t.Errorf("Randn(%d, %d): panic %q, want one naming the negative size", size[0], size[1], r)
				}
			}()
			g.Randn(size[0], size[1])
		}()
	}
}
