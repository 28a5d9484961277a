package data

import (
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// testImage is a w x h image whose pixels are a function of (x, y, k).
func testImage(w, h, k int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetNRGBA(x, y, color.NRGBA{uint8(x*9 + y*4 + k*13), uint8(x*2 + y*7 + k*11), uint8((x+y)*5 + k*17), 255})
		}
	}
	return img
}

// writeImage writes img to path as PNG or JPEG (by its extension).
func writeImage(t testing.TB, path string, img image.Image) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if strings.HasSuffix(path, ".png") {
		err = png.Encode(f, img)
	} else {
		err = jpeg.Encode(f, img, &jpeg.Options{Quality: 90})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// writeImageFolder writes classes "cat" and "dog" of n images each, w x h,
// alternating PNG and JPEG, under a new temp folder it returns.
func writeImageFolder(t testing.TB, n, w, h int) string {
	t.Helper()
	root := t.TempDir()
	for c, class := range []string{"dog", "cat"} {
		for i := range n {
			ext := ".png"
			if i%2 == 1 {
				ext = ".jpg"
			}
			writeImage(t, filepath.Join(root, class, fmt.Sprintf("%03d%s", i, ext)), testImage(w, h, c*n+i))
		}
	}
	return root
}

// TestImageFolderScan: classes are the sorted sub-folders, examples the
// sorted image files (others skipped), labels the class indices; a folder
// without classes or a class without images is refused by name.
func TestImageFolderScan(t *testing.T) {
	root := writeImageFolder(t, 3, 4, 4)
	if err := os.WriteFile(filepath.Join(root, "cat", "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeImage(t, filepath.Join(root, "cat", "sub", "004.PNG"), testImage(4, 4, 9))
	f, err := OpenImageFolder(root)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.Classes, []string{"cat", "dog"}) {
		t.Errorf("Classes = %v", f.Classes)
	}
	var rel []string
	for _, p := range f.Paths {
		r, _ := filepath.Rel(root, p)
		rel = append(rel, filepath.ToSlash(r))
	}
	want := []string{"cat/000.png", "cat/001.jpg", "cat/002.png", "cat/sub/004.PNG", "dog/000.png", "dog/001.jpg", "dog/002.png"}
	if !reflect.DeepEqual(rel, want) || !reflect.DeepEqual(f.Targets, []int32{0, 0, 0, 0, 1, 1, 1}) {
		t.Errorf("Paths = %v, Targets = %v; want %v, [0 0 0 0 1 1 1]", rel, f.Targets, want)
	}

	empty := t.TempDir()
	if _, err := OpenImageFolder(empty); err == nil || !strings.Contains(err.Error(), empty+" has no class sub-folders") {
		t.Errorf("no classes: error = %v", err)
	}
	if err := os.Mkdir(filepath.Join(empty, "bird"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenImageFolder(empty); err == nil || !strings.Contains(err.Error(), filepath.Join(empty, "bird")+" has no images") {
		t.Errorf("empty class: error = %v", err)
	}
}

// TestImageFolderPixels: a PNG reads back as its pixels / 255 in
// channel-major order; Grayscale, Normalize, CenterCrop and a certain flip
// give what their definitions say.
func TestImageFolderPixels(t *testing.T) {
	root := t.TempDir()
	src := testImage(5, 4, 2)
	writeImage(t, filepath.Join(root, "a", "x.png"), src)
	at := func(c, x, y int) float32 {
		p := src.NRGBAAt(x, y)
		return float32([]uint8{p.R, p.G, p.B}[c]) / 255
	}
	get := func(f *ImageFolder) ([]float32, []int) {
		t.Helper()
		ex, err := f.Get(0)
		if err != nil {
			t.Fatal(err)
		}
		if ex.Labels[0].Value != int32(0) {
			t.Errorf("label = %v, want int32 0", ex.Labels[0].Value)
		}
		return ex.Inputs[0].Value.([]float32), ex.Inputs[0].Shape
	}
	f, err := OpenImageFolder(root)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, got []float32, shape []int, want func(c, x, y int) float32) {
		t.Helper()
		if len(got) != shapeSize(shape) {
			t.Fatalf("%s: %d values for shape %v", name, len(got), shape)
		}
		for c := range shape[0] {
			for y := range shape[1] {
				for x := range shape[2] {
					g, w := got[(c*shape[1]+y)*shape[2]+x], want(c, x, y)
					if d := g - w; d > 1e-6 || d < -1e-6 {
						t.Fatalf("%s: [%d,%d,%d] = %v, want %v", name, c, y, x, g, w)
					}
				}
			}
		}
	}
	got, shape := get(f)
	if !reflect.DeepEqual(shape, []int{3, 4, 5}) {
		t.Fatalf("shape = %v, want [3 4 5]", shape)
	}
	check("plain", got, shape, at)

	f.Normalize = &Normalize{Mean: []float32{0.5, 0.25, 0}, Std: []float32{0.5, 2, 1}}
	got, shape = get(f)
	check("normalize", got, shape, func(c, x, y int) float32 {
		return (at(c, x, y) - f.Normalize.Mean[c]) / f.Normalize.Std[c]
	})

	f.Normalize = nil
	f.Grayscale = true
	got, shape = get(f)
	check("grayscale", got, shape, func(_, x, y int) float32 {
		p := src.NRGBAAt(x, y)
		return float32((int(p.R)*299+int(p.G)*587+int(p.B)*114+500)/1000) / 255
	})

	f.Grayscale = false
	f.Transforms = []ImageTransform{CenterCrop{Width: 2, Height: 2}, RandomHorizontalFlip{P: 1}}
	got, shape = get(f)
	// 5x4 → 2x2 at left round(1.5)=2, top 1; then mirrored.
	check("crop+flip", got, shape, func(c, x, y int) float32 { return at(c, 2+1-x, 1+y) })

	f.Transforms = []ImageTransform{CenterCrop{Width: 6, Height: 2}}
	if _, err := f.Get(0); err == nil || !strings.Contains(err.Error(), "x.png: data.CenterCrop: the image is 5x4, smaller than the 6x2 crop") {
		t.Errorf("crop too large: error = %v", err)
	}
	f.Transforms = nil
	f.Normalize = &Normalize{Mean: []float32{0}, Std: []float32{1}}
	if _, err := f.Get(0); err == nil || !strings.Contains(err.Error(), "Mean and Std need 3 values") {
		t.Errorf("bad Normalize: error = %v", err)
	}
}

// augmentedLoader is a loader over root with random crops and flips.
func augmentedLoader(t *testing.T, root string, workers int, seed uint64) *DataLoader {
	t.Helper()
	f, err := OpenImageFolder(root, Resize{Size: 12}, RandomCrop{Width: 8, Height: 8}, RandomHorizontalFlip{})
	if err != nil {
		t.Fatal(err)
	}
	return &DataLoader{Dataset: f, BatchSize: 3, Shuffle: true, Seed: &seed, Workers: workers}
}

// loaderInputs returns the flat inputs of each batch of an epoch from skip.
func loaderInputs(t *testing.T, l *DataLoader, epoch, skip int) []string {
	t.Helper()
	var out []string
	for b, err := range l.Batches(t.Context(), epoch, skip) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(b.Inputs[0].Value(), b.Labels[0].Value()))
	}
	return out
}

// TestImageFolderAugmentationDeterministic: random crops and flips are a
// function of (seed, epoch, example): equal for any Workers and on resume,
// different across epochs and seeds.
func TestImageFolderAugmentationDeterministic(t *testing.T) {
	root := writeImageFolder(t, 5, 14, 12)
	want := loaderInputs(t, augmentedLoader(t, root, 0, 7), 1, 0)
	if len(want) != 4 {
		t.Fatalf("%d batches, want 4", len(want))
	}
	for _, workers := range []int{1, 3} {
		if got := loaderInputs(t, augmentedLoader(t, root, workers, 7), 1, 0); !reflect.DeepEqual(got, want) {
			t.Errorf("Workers %d: batches differ from Workers 0", workers)
		}
	}
	for skip := 1; skip < len(want); skip++ {
		if got := loaderInputs(t, augmentedLoader(t, root, 2, 7), 1, skip); !reflect.DeepEqual(got, want[skip:]) {
			t.Errorf("resumed at batch %d: batches differ from the full epoch's", skip)
		}
	}
	// Unshuffled, so that only the augmentations can differ.
	a, b := augmentedLoader(t, root, 0, 7), augmentedLoader(t, root, 0, 8)
	a.Shuffle, b.Shuffle = false, false
	if reflect.DeepEqual(loaderInputs(t, a, 1, 0), loaderInputs(t, a, 2, 0)) {
		t.Error("epochs 1 and 2 give the same crops and flips")
	}
	if reflect.DeepEqual(loaderInputs(t, a, 0, 0), loaderInputs(t, b, 0, 0)) {
		t.Error("seeds 7 and 8 give the same crops and flips")
	}
}

// TestImageFolderUnreadableImage: a file that does not decode fails its
// batch with an error naming the example and the file.
func TestImageFolderUnreadableImage(t *testing.T) {
	root := writeImageFolder(t, 2, 6, 6)
	bad := filepath.Join(root, "cat", "001.jpg")
	if err := os.WriteFile(bad, []byte("\xff\xd8 not really a jpeg"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := OpenImageFolder(root)
	if err != nil {
		t.Fatal(err)
	}
	var gotErr error
	for _, err := range (&DataLoader{Dataset: f, BatchSize: 2, Workers: 2}).Batches(t.Context(), 0, 0) {
		if err != nil {
			gotErr = err
		}
	}
	want := "data.ImageFolder: example 1: " + bad + ": cannot decode it as PNG or JPEG"
	if gotErr == nil || !strings.Contains(gotErr.Error(), want) {
		t.Errorf("error = %v, want one containing %q", gotErr, want)
	}
}
