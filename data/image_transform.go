package data

import (
	"fmt"
	"image"
	"math"
	"math/rand/v2"

	xdraw "golang.org/x/image/draw"
)

// ImageTransform changes a decoded image (torchvision's transforms before
// ToTensor). A random transform draws only from rng, which ImageFolder
// seeds per (seed, epoch, example); the others ignore it. Transform may
// return img itself, changed in place, or a sub-image of it.
type ImageTransform interface {
	Transform(img *image.RGBA, rng *rand.Rand) (*image.RGBA, error)
}

// Resize scales the image (torchvision's Resize). With Size > 0 the
// shorter edge becomes Size and the other keeps the aspect ratio (rounded
// down, as torchvision); else the image becomes Width x Height.
// Interpolator is nil for bilinear (golang.org/x/image/draw.BiLinear,
// which does not antialias when shrinking, unlike PIL's).
type Resize struct {
	Size          int
	Width, Height int
	Interpolator  xdraw.Interpolator
}

// Transform implements ImageTransform.
func (r Resize) Transform(img *image.RGBA, _ *rand.Rand) (*image.RGBA, error) {
	w, h := img.Rect.Dx(), img.Rect.Dy()
	ow, oh := r.Width, r.Height
	switch {
	case r.Size > 0 && w <= h:
		ow, oh = r.Size, int(float64(r.Size)*float64(h)/float64(w))
	case r.Size > 0:
		ow, oh = int(float64(r.Size)*float64(w)/float64(h)), r.Size
	case ow <= 0 || oh <= 0:
		return nil, fmt.Errorf("data.Resize: set Size, or Width and Height, > 0; got Size %d, %dx%d", r.Size, r.Width, r.Height)
	}
	if ow == w && oh == h {
		return img, nil
	}
	interp := r.Interpolator
	if interp == nil {
		interp = xdraw.BiLinear
	}
	dst := image.NewRGBA(image.Rect(0, 0, ow, oh))
	interp.Scale(dst, dst.Rect, img, img.Rect, xdraw.Src, nil)
	return dst, nil
}

// CenterCrop cuts the central Width x Height part (torchvision's
// CenterCrop: the top-left corner at round((h-Height)/2),
// round((w-Width)/2), halves rounded to even). An image smaller than the
// crop is an error (torchvision pads it instead).
type CenterCrop struct {
	Width, Height int
}

// Transform implements ImageTransform.
func (c CenterCrop) Transform(img *image.RGBA, _ *rand.Rand) (*image.RGBA, error) {
	if err := checkCrop("data.CenterCrop", img, c.Width, c.Height); err != nil {
		return nil, err
	}
	top := int(math.RoundToEven(float64(img.Rect.Dy()-c.Height) / 2))
	left := int(math.RoundToEven(float64(img.Rect.Dx()-c.Width) / 2))
	return crop(img, left, top, c.Width, c.Height), nil
}

// RandomCrop cuts a Width x Height part at a uniformly random position
// (torchvision's RandomCrop without padding).
type RandomCrop struct {
	Width, Height int
}

// Transform implements ImageTransform.
func (c RandomCrop) Transform(img *image.RGBA, rng *rand.Rand) (*image.RGBA, error) {
	if err := checkCrop("data.RandomCrop", img, c.Width, c.Height); err != nil {
		return nil, err
	}
	top := rng.IntN(img.Rect.Dy() - c.Height + 1)
	left := rng.IntN(img.Rect.Dx() - c.Width + 1)
	return crop(img, left, top, c.Width, c.Height), nil
}

// RandomHorizontalFlip mirrors the image left to right with probability P
// (torchvision's RandomHorizontalFlip); P = 0 means 0.5, torchvision's
// default, and P >= 1 always flips.
type RandomHorizontalFlip struct {
	P float64
}

// Transform implements ImageTransform.
func (f RandomHorizontalFlip) Transform(img *image.RGBA, rng *rand.Rand) (*image.RGBA, error) {
	p := f.P
	if p == 0 {
		p = 0.5
	}
	if p < 0 || p > 1 {
		return nil, fmt.Errorf("data.RandomHorizontalFlip.P: must be in [0, 1], got %v", f.P)
	}
	if rng.Float64() >= p {
		return img, nil
	}
	// A fresh image: img may share its pixels with another (a crop).
	b := img.Rect
	dst := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	for y := range b.Dy() {
		src := img.Pix[img.PixOffset(b.Min.X, b.Min.Y+y):]
		row := dst.Pix[dst.PixOffset(0, y):]
		for x := range b.Dx() {
			copy(row[4*(b.Dx()-1-x):4*(b.Dx()-x)], src[4*x:4*x+4])
		}
	}
	return dst, nil
}

// checkCrop checks that a w x h crop fits in img.
func checkCrop(name string, img *image.RGBA, w, h int) error {
	if w <= 0 || h <= 0 {
		return fmt.Errorf("%s: Width and Height must be > 0, got %dx%d", name, w, h)
	}
	if w > img.Rect.Dx() || h > img.Rect.Dy() {
		return fmt.Errorf("%s: the image is %dx%d, smaller than the %dx%d crop (resize it first)",
			name, img.Rect.Dx(), img.Rect.Dy(), w, h)
	}
	return nil
}

// crop returns the w x h sub-image of img at (left, top) relative to its
// corner, sharing img's pixels.
func crop(img *image.RGBA, left, top, w, h int) *image.RGBA {
	min := img.Rect.Min.Add(image.Pt(left, top))
	return img.SubImage(image.Rectangle{Min: min, Max: min.Add(image.Pt(w, h))}).(*image.RGBA)
}
