package main

import (
	"image"
	"image/draw"
	"math/rand/v2"
)

// pad is a user-defined data.ImageTransform: it adds Pixels black pixels
// on every side (torchvision's Pad, fill 0), so that a 28x28 RandomCrop
// after it shifts the digit by up to Pixels in each direction.
type pad struct{ Pixels int }

// Transform implements data.ImageTransform.
func (p pad) Transform(img *image.RGBA, _ *rand.Rand) (*image.RGBA, error) {
	b := img.Rect
	dst := image.NewRGBA(image.Rect(0, 0, b.Dx()+2*p.Pixels, b.Dy()+2*p.Pixels))
	draw.Draw(dst, dst.Rect, image.Black, image.Point{}, draw.Src)
	draw.Draw(dst, image.Rect(p.Pixels, p.Pixels, p.Pixels+b.Dx(), p.Pixels+b.Dy()), img, b.Min, draw.Src)
	return dst, nil
}
