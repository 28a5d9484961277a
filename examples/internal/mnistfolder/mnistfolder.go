// Package mnistfolder writes MNIST as a folder of PNG images per class,
// torchvision's ImageFolder layout, for the examples that read images
// through data.ImageFolder (imagefolder, finetune).
package mnistfolder

import (
	"errors"
	"fmt"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/voltml/volt/datasets/mnist"
)

// markerName is the file that marks a folder as written by Write (named
// after the example that first wrote it, so that its folders stay
// accepted).
const markerName = "volt-imagefolder.txt"

// Prepare makes dir ready to be written: it creates it when missing and
// accepts it when empty or marked as written by Write; a non-empty folder
// without the marker is refused, so nothing of the user's is overwritten.
func Prepare(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, markerName)); err == nil {
		return nil
	}
	return fmt.Errorf("-dir %s is not empty and was not written by this example (no %s in it): give an empty or new folder", dir, markerName)
}

// Folder returns the folder an example writes its images into: dir,
// prepared (Prepare), or, when dir is "", a new temporary folder named after
// tempPrefix, which cleanup removes (everything in it is the example's);
// cleanup does nothing for a folder the user gave.
func Folder(dir, tempPrefix string) (folder string, cleanup func(), err error) {
	if dir != "" {
		return dir, func() {}, Prepare(dir)
	}
	tmp, err := os.MkdirTemp("", tempPrefix)
	if err != nil {
		return "", nil, err
	}
	return tmp, func() { os.RemoveAll(tmp) }, nil
}

// Write writes dir/train/<digit>/NNNNN.png (the first perClass
// images of each digit of MNIST's training set) and dir/val/<digit>/ (the
// first valPerClass of each digit of its test set). With shuffleLabels each
// training image goes under a random digit's folder instead (a control: a
// model can then learn nothing that holds on val). It returns the number
// of images written.
func Write(dir string, perClass, valPerClass int, shuffleLabels bool, seed uint64) (int, error) {
	train, test, err := mnist.Load()
	if err != nil {
		return 0, err
	}
	if err := os.WriteFile(filepath.Join(dir, markerName), []byte("written by github.com/voltml/volt/examples/internal/mnistfolder (examples imagefolder, finetune)\n"), 0o644); err != nil {
		return 0, err
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	n := 0
	for _, split := range []struct {
		name    string
		ds      *mnist.Dataset
		per     int
		shuffle bool
	}{{"train", train, perClass, shuffleLabels}, {"val", test, valPerClass, false}} {
		counts := make([]int, mnist.NumClasses)
		for i := 0; i < split.ds.Len(); i++ {
			ex, err := split.ds.Get(i)
			if err != nil {
				return n, err
			}
			digit := int(ex.Labels[0].Value.(int32))
			if counts[digit] >= split.per {
				continue
			}
			counts[digit]++
			class := digit
			if split.shuffle {
				class = rng.IntN(mnist.NumClasses)
			}
			path := filepath.Join(dir, split.name, fmt.Sprint(class), fmt.Sprintf("%05d.png", i))
			if err := writePNG(path, ex.Inputs[0].Value.([]float32)); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// writePNG writes 784 pixels in [0, 1] as a 28x28 grayscale PNG.
func writePNG(path string, pixels []float32) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	img := image.NewGray(image.Rect(0, 0, 28, 28))
	for j, p := range pixels {
		img.Pix[j] = uint8(p*255 + 0.5)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}
