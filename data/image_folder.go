package data

import (
	"errors"
	"fmt"
	"image"
	"image/draw"
	_ "image/jpeg" // registers JPEG for image.Decode
	_ "image/png"  // registers PNG for image.Decode
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// imageExtensions are the file name endings ImageFolder reads (compared
// case-insensitively); other files are skipped, as torchvision skips
// files outside its IMG_EXTENSIONS.
var imageExtensions = []string{".png", ".jpg", ".jpeg"}

// ImageFolder is a map-style dataset over a folder with one sub-folder per
// class (torchvision's ImageFolder): the classes are the sub-folders'
// names, sorted, and class k's label is k; the examples are the PNG and
// JPEG files of each class, sorted by path.
//
// Get decodes example i (Go's image/png and image/jpeg), converts it to
// RGB (premultiplied alpha: a transparent pixel is black), runs the
// Transforms in order, and returns the input as []float32 of shape
// [Channels, H, W] with values in [0, 1] (torchvision's ToTensor), then
// Normalize'd, and the label as an int32 scalar. All images must come out
// of the transforms with one size to be batched by DefaultCollate.
//
// It is a SeededDataset: the random transforms draw from a generator
// seeded by (the loader's seed, the epoch, i), so the examples do not
// depend on Workers or on where a resumed run starts. Get alone draws as
// GetSeeded(i, 0, 0).
type ImageFolder struct {
	// Root is the folder of class sub-folders.
	Root string
	// Classes are the class names (sub-folder names), sorted.
	Classes []string
	// Paths are the image files, Targets their class indices.
	Paths   []string
	Targets []int32
	// Transforms run on each decoded image, in order.
	Transforms []ImageTransform
	// Normalize, when set, maps each channel c to (x - Mean[c]) / Std[c]
	// after the [0, 1] scaling.
	Normalize *Normalize
	// Grayscale gives one channel, the luma 0.299 R + 0.587 G + 0.114 B
	// (PIL's convert("L") weights), instead of three.
	Grayscale bool
}

var _ SeededDataset = (*ImageFolder)(nil)

// Normalize is a per-channel mean and standard deviation (torchvision's
// Normalize); each has one value per channel.
type Normalize struct {
	Mean, Std []float32
}

// OpenImageFolder lists root's class sub-folders and their images. A root
// without sub-folders, or a class without images, is an error naming the
// folder.
func OpenImageFolder(root string, transforms ...ImageTransform) (*ImageFolder, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("data.OpenImageFolder: %w", err)
	}
	f := &ImageFolder{Root: root, Transforms: transforms}
	for _, e := range entries {
		if e.IsDir() {
			f.Classes = append(f.Classes, e.Name())
		}
	}
	if len(f.Classes) == 0 {
		return nil, fmt.Errorf("data.OpenImageFolder: %s has no class sub-folders (want one folder of images per class)", root)
	}
	slices.Sort(f.Classes)
	for k, class := range f.Classes {
		dir := filepath.Join(root, class)
		var paths []string
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && slices.Contains(imageExtensions, strings.ToLower(filepath.Ext(path))) {
				paths = append(paths, path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("data.OpenImageFolder: %w", err)
		}
		if len(paths) == 0 {
			return nil, fmt.Errorf("data.OpenImageFolder: class folder %s has no images (%s)", dir, strings.Join(imageExtensions, ", "))
		}
		slices.Sort(paths)
		for _, p := range paths {
			f.Paths = append(f.Paths, p)
			f.Targets = append(f.Targets, int32(k))
		}
	}
	return f, nil
}

// Len implements Dataset.
func (f *ImageFolder) Len() int { return len(f.Paths) }

// Get implements Dataset: GetSeeded(i, 0, 0).
func (f *ImageFolder) Get(i int) (Example, error) { return f.GetSeeded(i, 0, 0) }

// GetSeeded implements SeededDataset.
func (f *ImageFolder) GetSeeded(i, epoch int, seed uint64) (Example, error) {
	if i < 0 || i >= len(f.Paths) {
		return Example{}, fmt.Errorf("data.ImageFolder: example %d out of range [0, %d)", i, len(f.Paths))
	}
	path := f.Paths[i]
	img, err := decodeRGBA(path)
	if err != nil {
		return Example{}, fmt.Errorf("data.ImageFolder: example %d: %w", i, err)
	}
	rng := exampleRand(seed, epoch, i)
	for _, t := range f.Transforms {
		if img, err = t.Transform(img, rng); err != nil {
			return Example{}, fmt.Errorf("data.ImageFolder: example %d: %s: %w", i, path, err)
		}
	}
	pixels, shape, err := f.tensor(img)
	if err != nil {
		return Example{}, fmt.Errorf("data.ImageFolder: example %d: %s: %w", i, path, err)
	}
	return Example{Inputs: []Field{{Value: pixels, Shape: shape}}, Labels: []Field{{Value: f.Targets[i]}}}, nil
}

// exampleRand is the generator of example i's random transforms in epoch:
// PCG seeded by seed and a SplitMix64 mix of (epoch, i).
func exampleRand(seed uint64, epoch, i int) *rand.Rand {
	z := uint64(epoch)<<40 ^ uint64(i) + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return rand.New(rand.NewPCG(seed, z^z>>31))
}

// decodeRGBA reads and decodes the image file at path as *image.RGBA. The
// error names the file.
func decodeRGBA(path string) (*image.RGBA, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	src, format, err := image.Decode(file)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot decode it as PNG or JPEG: %w", path, err)
	}
	if rgba, ok := src.(*image.RGBA); ok {
		return rgba, nil
	}
	b := src.Bounds()
	if b.Empty() {
		return nil, fmt.Errorf("%s: the %s image is empty (%dx%d)", path, format, b.Dx(), b.Dy())
	}
	dst := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(dst, dst.Rect, src, b.Min, draw.Src)
	return dst, nil
}

// tensor converts img to channel-major float32 in [0, 1], normalized.
func (f *ImageFolder) tensor(img *image.RGBA) ([]float32, []int, error) {
	channels := 3
	if f.Grayscale {
		channels = 1
	}
	if n := f.Normalize; n != nil && (len(n.Mean) != channels || len(n.Std) != channels) {
		return nil, nil, fmt.Errorf("data.ImageFolder.Normalize: Mean and Std need %d values (one per channel), got %d and %d",
			channels, len(n.Mean), len(n.Std))
	}
	if n := f.Normalize; n != nil && slices.Contains(n.Std, 0) {
		return nil, nil, errors.New("data.ImageFolder.Normalize: Std has a 0")
	}
	b := img.Rect
	w, h := b.Dx(), b.Dy()
	out := make([]float32, channels*h*w)
	plane := h * w
	for y := range h {
		row := img.Pix[img.PixOffset(b.Min.X, b.Min.Y+y):]
		for x := range w {
			p := row[4*x : 4*x+3 : 4*x+3]
			if f.Grayscale {
				// PIL: L = R*299/1000 + G*587/1000 + B*114/1000, rounded.
				l := (uint32(p[0])*19595 + uint32(p[1])*38470 + uint32(p[2])*7471 + 0x8000) >> 16
				out[y*w+x] = float32(l) / 255
				continue
			}
			for c := range 3 {
				out[c*plane+y*w+x] = float32(p[c]) / 255
			}
		}
	}
	if n := f.Normalize; n != nil {
		for c := range channels {
			m, s := n.Mean[c], n.Std[c]
			for j := c * plane; j < (c+1)*plane; j++ {
				out[j] = (out[j] - m) / s
			}
		}
	}
	return out, []int{channels, h, w}, nil
}
