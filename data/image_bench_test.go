package data

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// benchImageFolder returns VOLT_IMAGE_BENCH_DIR when set (a folder, such as
// one written by `pil_pipeline.py make`, to time against PIL), else a new
// folder of 2 classes x 8 noisy 96x96 JPEGs.
func benchImageFolder(b *testing.B) string {
	if dir := os.Getenv("VOLT_IMAGE_BENCH_DIR"); dir != "" {
		return dir
	}
	root := b.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	for c, class := range []string{"cat", "dog"} {
		for i := range 8 {
			img := image.NewNRGBA(image.Rect(0, 0, 96, 96))
			for y := range 96 {
				for x := range 96 {
					k := c*8 + i
					img.SetNRGBA(x, y, color.NRGBA{uint8(x*3 + y + k*7 + rng.IntN(32)), uint8(y*2 + k*13 + rng.IntN(32)),
						uint8(x + y*5 + rng.IntN(32)), 255})
				}
			}
			writeImage(b, filepath.Join(root, class, fmt.Sprintf("%04d.jpg", i)), img)
		}
	}
	return root
}

// BenchmarkImageFolder: images decoded and transformed (shorter edge to
// 64, centre crop 56, flip, normalize: pil_pipeline.py bench's steps) per
// second, on one goroutine (per worker) and through a DataLoader with 2
// workers.
func BenchmarkImageFolder(b *testing.B) {
	root := benchImageFolder(b)
	f, err := OpenImageFolder(root, Resize{Size: 64}, CenterCrop{Width: 56, Height: 56}, RandomHorizontalFlip{P: 1})
	if err != nil {
		b.Fatal(err)
	}
	f.Normalize = &Normalize{Mean: []float32{0.5, 0.5, 0.5}, Std: []float32{0.25, 0.25, 0.25}}
	b.Run("per_worker", func(b *testing.B) {
		images := 0
		for b.Loop() {
			for i := range f.Len() {
				if _, err := f.GetSeeded(i, 0, 1); err != nil {
					b.Fatal(err)
				}
				images++
			}
		}
		b.ReportMetric(float64(images)/b.Elapsed().Seconds(), "images/s")
	})
	b.Run("loader_workers=2", func(b *testing.B) {
		seed := uint64(1)
		l := &DataLoader{Dataset: f, BatchSize: 8, Seed: &seed, Workers: 2}
		images := 0
		for b.Loop() {
			for batch, err := range l.Batches(context.Background(), 0, 0) {
				if err != nil {
					b.Fatal(err)
				}
				images += batch.Size
			}
		}
		b.ReportMetric(float64(images)/b.Elapsed().Seconds(), "images/s")
	})
}
