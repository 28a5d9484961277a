package data

import (
	"context"
	"fmt"
	"testing"
)

// mnistShaped returns n examples shaped like MNIST: 784 float32 pixels and an
// int32 label.
func mnistShaped(n int) Slice {
	s := make(Slice, n)
	for i := range s {
		pixels := make([]float32, 784)
		for j := range pixels {
			pixels[j] = float32((i+j)%256) / 255
		}
		s[i] = Example{Inputs: []Field{{Value: pixels}}, Labels: []Field{{Value: int32(i % 10)}}}
	}
	return s
}

func BenchmarkDataLoaderMNISTShape(b *testing.B) {
	ds := mnistShaped(6400)
	for _, workers := range []int{0, 4} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			seed := uint64(1)
			l := &DataLoader{Dataset: ds, BatchSize: 64, Shuffle: true, Seed: &seed, Workers: workers}
			b.ReportAllocs()
			batches := 0
			for b.Loop() {
				for _, err := range l.Batches(context.Background(), batches, 0) {
					if err != nil {
						b.Fatal(err)
					}
					batches++
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(batches), "ns/batch")
		})
	}
}
