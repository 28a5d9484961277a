package data

import (
	"encoding/json"
	"math"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/voltml/volt/internal/testenv"
)

// pilTensors runs testdata/images/pil_pipeline.py's step sets on root with
// PIL: by set, each image's tensor by path relative to root.
func pilTensors(t *testing.T, root string, sets ...string) map[string]map[string][2]json.RawMessage {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import PIL, numpy").Run(); err != nil {
		testenv.Missing(t, "python3 with PIL and numpy is not installed", "apt-get install python3-pil python3-numpy")
	}
	cmd := exec.Command("/usr/bin/python3", append([]string{filepath.Join("testdata", "images", "pil_pipeline.py"), "tensors", root}, sets...)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pil_pipeline.py: %v", err)
	}
	var got map[string]map[string][2]json.RawMessage
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestImageFolderMatchesPIL: ImageFolder's tensors against PIL's (the
// library torchvision's transforms call) for the same folder and steps.
// PNG decodes are exact; Go's JPEG decoder and libjpeg may differ by a
// level or two (different IDCT and chroma upsampling), and x/image's
// bilinear upscaling and PIL's by a rounding step: the tolerances say so.
func TestImageFolderMatchesPIL(t *testing.T) {
	root := writeImageFolder(t, 4, 10, 8)
	norm := &Normalize{Mean: []float32{0.5, 0.5, 0.5}, Std: []float32{0.25, 0.25, 0.25}}
	cases := []struct {
		name       string
		steps      string
		transforms []ImageTransform
		gray       bool
		normalize  *Normalize
		png, jpeg  float64 // max |Go - PIL| in units of 1/255 (before normalizing)
	}{
		{"plain", "", nil, false, nil, 0, 6},
		{"gray", "gray", nil, true, nil, 0, 6},
		{"crop_flip_normalize", "centercrop=5,5+flip+normalize",
			[]ImageTransform{CenterCrop{Width: 5, Height: 5}, RandomHorizontalFlip{P: 1}}, false, norm, 0, 6},
		{"resize_up", "resize=20,16", []ImageTransform{Resize{Width: 20, Height: 16}}, false, nil, 1, 6},
	}
	var sets []string
	for _, c := range cases {
		sets = append(sets, c.steps)
	}
	pil := pilTensors(t, root, sets...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := pil[c.steps]
			f, err := OpenImageFolder(root, c.transforms...)
			if err != nil {
				t.Fatal(err)
			}
			f.Grayscale, f.Normalize = c.gray, c.normalize
			scale := 1.0
			if c.normalize != nil {
				scale = 1 / 0.25
			}
			worst := map[bool]float64{}
			for i, p := range f.Paths {
				rel, _ := filepath.Rel(root, p)
				w, ok := want[rel]
				if !ok {
					t.Fatalf("PIL did not read %s", rel)
				}
				var shape []int
				var values []float64
				if err := json.Unmarshal(w[0], &shape); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(w[1], &values); err != nil {
					t.Fatal(err)
				}
				ex, err := f.Get(i)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(ex.Inputs[0].Shape, shape) {
					t.Fatalf("%s: shape %v, PIL's %v", rel, ex.Inputs[0].Shape, shape)
				}
				isJPEG := strings.HasSuffix(p, ".jpg")
				for j, g := range ex.Inputs[0].Value.([]float32) {
					d := math.Abs(float64(g)-values[j]) * 255 / scale
					worst[isJPEG] = max(worst[isJPEG], d)
				}
			}
			t.Logf("max |Go - PIL|: PNG %.3f/255, JPEG %.3f/255", worst[false], worst[true])
			if worst[false] > c.png+1e-3 || worst[true] > c.jpeg+1e-3 {
				t.Errorf("max |Go - PIL| = PNG %.3f/255, JPEG %.3f/255; want <= %v, %v", worst[false], worst[true], c.png, c.jpeg)
			}
		})
	}
}
