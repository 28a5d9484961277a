package gokernels

import (
	"fmt"
	"math"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/gobackend"
)

// TestSerialDotsMatchSplit runs float32 matrix products of both layouts,
// with and without batch axes, below and above serialDotMACs at
// GOMAXPROCS=2, with the kernels on (small ones on one core) and off (the
// backend splits them all): the bits must be equal, exactly the small
// ones must run on one core, and both must be the product (a float64
// reference: execDot wraps every float32 product, on or off).
func TestSerialDotsMatchSplit(t *testing.T) {
	if err := Installed(); err != nil {
		t.Fatalf("kernels not installed: %v", err)
	}
	if dotErr != nil {
		t.Fatalf("the matrix product hook is not installed: %v", dotErr)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	backend, err := gobackend.New("")
	if err != nil {
		t.Fatal(err)
	}
	defer backend.Finalize()
	for _, tc := range []struct {
		batch, m, k int
		transposed  bool // contract both operands' last axes (dot.LayoutTransposed)
	}{
		{1, 64, 784, true},   // 3.2M multiply-adds
		{1, 64, 300, false},  // 1.2M
		{4, 128, 256, true},  // 16.8M: split
		{1, 512, 128, false}, // 33.6M: split
		{3, 100, 33, false},  // odd sizes
		{2, 256, 120, true},  // 15.7M: just under
		{1, 400, 512, true},  // 81.9M: split
	} {
		name := fmt.Sprintf("b%d_m%d_k%d_transposed=%v", tc.batch, tc.m, tc.k, tc.transposed)
		macs := tc.batch * tc.m * tc.m * tc.k
		c := opCase{name: name, dims: []int{tc.batch, tc.m, tc.k},
			values: func(i int) float32 { return float32(math.Sin(float64(i) * 0.37)) },
			build: func(fn compute.Function, x compute.Value) (compute.Value, error) {
				if tc.transposed { // [B, M, K]·[B, M, K] over K
					return fn.DotGeneral(x, []int{2}, []int{0}, x, []int{2}, []int{0}, compute.DotGeneralConfig{})
				}
				xt, err := fn.Transpose(x, 0, 2, 1) // [B, K, M]
				if err != nil {
					return nil, err
				}
				return fn.DotGeneral(x, []int{2}, []int{0}, xt, []int{1}, []int{0}, compute.DotGeneralConfig{})
			}}
		t.Run(name, func(t *testing.T) {
			want, _ := runCase(t, backend, c, false)
			before := serialDots.Load()
			got, _ := runCase(t, backend, c, true)
			serial := serialDots.Load() - before
			if wantSerial := map[bool]int64{true: 1, false: 0}[macs < serialDotMACs]; serial != wantSerial {
				t.Errorf("%d products on one core, want %d (%d multiply-adds)", serial, wantSerial, macs)
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("value %d: %v on one core, %v split", i, got[i], want[i])
				}
			}
			checkProduct(t, got, tc.batch, tc.m, tc.k, c.values)
		})
	}
}

// checkProduct checks got, [B, M, M], against x·xᵀ per batch in float64
// for x [B, M, K] of the given values, within float32 summation's bound.
func checkProduct(t *testing.T, got []float32, batch, m, k int, values func(int) float32) {
	t.Helper()
	x := make([]float64, batch*m*k)
	for i := range x {
		x[i] = float64(values(i))
	}
	for b := range batch {
		for i := range m {
			for j := range m {
				var sum, abs float64
				for l := range k {
					p := x[(b*m+i)*k+l] * x[(b*m+j)*k+l]
					sum, abs = sum+p, abs+math.Abs(p)
				}
				g := float64(got[(b*m+i)*m+j])
				if math.Abs(g-sum) > float64(k)*abs/(1<<23)+1e-30 {
					t.Fatalf("[%d, %d, %d] = %v, want %v", b, i, j, g, sum)
				}
			}
		}
	}
}

// BenchmarkSerialDots times execDot on the autoencoder's and the MLP's
// products at batch 64 with the kernels on (on one core) and off (the
// backend splits them over GOMAXPROCS cores), alternating, and reports
// both and their ratio; run it with -cpu 2.
//
//	GOEXPERIMENT=simd go test ./internal/gokernels -run '^$' -bench SerialDots -benchtime 300x -cpu 2
func BenchmarkSerialDots(b *testing.B) {
	if dotErr != nil {
		b.Skipf("the matrix product hook is not installed: %v", dotErr)
	}
	backend, err := gobackend.New("")
	if err != nil {
		b.Fatal(err)
	}
	defer backend.Finalize()
	real := reflect.ValueOf(backend).UnsafePointer()
	for _, p := range []struct{ m, k, n int }{{64, 784, 256}, {64, 256, 784}, {64, 784, 512}, {64, 512, 10}} {
		b.Run(fmt.Sprintf("%dx%dx%d", p.m, p.k, p.n), func(b *testing.B) {
			lhs, rhs, out := make([]float32, p.m*p.k), make([]float32, p.k*p.n), make([]float32, p.m*p.n)
			for i := range lhs {
				lhs[i] = float32(i%13) * 0.1
			}
			for i := range rhs {
				rhs[i] = float32(i%7) * 0.01
			}
			defer SetEnabled(SetEnabled(true))
			var took [2]time.Duration // on, off
			for b.Loop() {
				for i := range took {
					SetEnabled(i == 0)
					start := time.Now()
					execDot(real, 0, lhs, rhs, 1, p.m, p.n, p.k, out, nil)
					took[i] += time.Since(start)
				}
			}
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(float64(took[0].Nanoseconds())/float64(b.N), "ns-serial")
			b.ReportMetric(float64(took[1].Nanoseconds())/float64(b.N), "ns-split")
			b.ReportMetric(float64(took[0])/float64(took[1]), "serial/split")
		})
	}
}
