package statedict

import (
	"fmt"
	"path"
	"strings"

	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"
)

// Option changes how Load and Apply match a state dict to a model.
type Option func(*options)

type options struct {
	onReport func(*Report)
	exclude  []string
	// excludePatterns are ExcludeMatching's.
	excludePatterns []string
	strict          bool
	renames         []func(string) string
	suffixes        []string // Transpose's
	convert         bool
}

func newOptions(opts []Option) *options {
	o := &options{strict: true}
	for _, opt := range opts {
		opt(o)
	}
	return o
}

// NonStrict is load_state_dict(strict=False): keys the model has and the
// file lacks keep their values (their initialisers'), and keys the file
// has and the model lacks are skipped; the Report lists both. A shape or
// dtype mismatch is still an error, as in PyTorch.
func NonStrict() Option { return func(o *options) { o.strict = false } }

// StripPrefix removes prefix from the file's keys that start with it:
// "module." (a model saved inside DistributedDataParallel), "model."
// (a LightningModule's attribute), "transformer." (a Hugging Face model
// loaded into its bare body).
func StripPrefix(prefix string) Option {
	return Rename(func(key string) string { return strings.TrimPrefix(key, prefix) })
}

// AddPrefix puts prefix before every key of the file: the file holds a
// part of the model (a backbone's weights, loaded into "backbone.").
func AddPrefix(prefix string) Option {
	return Rename(func(key string) string { return prefix + key })
}

// OnReport calls f with the Report of each Load, and of each Apply that
// loads (the first trace): where Apply is deferred, the way to see what
// NonStrict skipped.
func OnReport(f func(*Report)) Option {
	return func(o *options) { o.onReport = f }
}

// Exclude leaves out the file's keys (before renaming) that start with
// one of prefixes, as if the file did not hold them: the classifier of a
// pretrained backbone being fine-tuned on other classes ("fc."), loaded
// with NonStrict so that the model's new head keeps its initial values.
// The Report lists them.
func Exclude(prefixes ...string) Option {
	return func(o *options) { o.exclude = append(o.exclude, prefixes...) }
}

// ExcludeMatching leaves out the file's keys (before renaming) that match
// one of patterns, path.Match's patterns over the whole key ("*" matches
// any run of characters but "/", dots included): "*.attn.bias" leaves out
// every block's attention-mask buffer. A malformed pattern panics.
func ExcludeMatching(patterns ...string) Option {
	for _, p := range patterns {
		if _, err := path.Match(p, ""); err != nil {
			panic(fmt.Sprintf("statedict.ExcludeMatching(%q): %v", p, err))
		}
	}
	return func(o *options) { o.excludePatterns = append(o.excludePatterns, patterns...) }
}

// excluded reports whether the file's key is left out.
func (o *options) excluded(key string) bool {
	for _, p := range o.exclude {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	for _, p := range o.excludePatterns {
		if ok, _ := path.Match(p, key); ok {
			return true
		}
	}
	return false
}

// Rename maps each of the file's keys to the model's key, after the
// renames given before it.
func Rename(f func(key string) string) Option {
	return func(o *options) { o.renames = append(o.renames, f) }
}

// Transpose transposes the 2-D tensors whose (renamed) keys end in one of
// suffixes as they load (and as SaveScope writes them, with the same
// option): a layer stored as [in, out] loading into a torch.nn.Linear's
// [out, in] weight.
func Transpose(suffixes ...string) Option {
	return func(o *options) { o.suffixes = append(o.suffixes, suffixes...) }
}

// GPT2Conv1DSuffixes are the keys of Hugging Face GPT-2's Conv1D layers,
// whose weights are [in, out] (transformers.pytorch_utils.Conv1D), the
// transpose of torch.nn.Linear's.
var GPT2Conv1DSuffixes = []string{".attn.c_attn.weight", ".attn.c_proj.weight", ".mlp.c_fc.weight", ".mlp.c_proj.weight"}

// GPT2Conv1D is Transpose(GPT2Conv1DSuffixes...): Hugging Face GPT-2's
// Conv1D weights load into nn.Linear-layout variables of the same names.
func GPT2Conv1D() Option { return Transpose(GPT2Conv1DSuffixes...) }

// ConvertDTypes lets a floating-point tensor load into a variable of
// another floating-point dtype (a float16 or bfloat16 file into a float32
// model), as load_state_dict's copy_ does; without it a dtype mismatch is
// an error.
func ConvertDTypes() Option { return func(o *options) { o.convert = true } }

// rename returns the model's key for the file's key.
func (o *options) rename(key string) string {
	for _, f := range o.renames {
		key = f(key)
	}
	return key
}

// transposes reports whether the tensor under the model's key is stored
// transposed.
func (o *options) transposes(key string) bool {
	for _, s := range o.suffixes {
		if strings.HasSuffix(key, s) {
			return true
		}
	}
	return false
}

// transpose2D returns t [a, b] as [b, a].
func transpose2D(key string, t *tensors.Tensor) (*tensors.Tensor, error) {
	dims := t.Shape().Dimensions
	if len(dims) != 2 {
		return nil, fmt.Errorf("%q is marked for transposing (Transpose, GPT2Conv1D) but has shape %v, not 2-D", key, dims)
	}
	rows, cols, size := dims[0], dims[1], t.DType().Size()
	out := tensors.FromShape(shapes.Make(t.DType(), cols, rows))
	var err error
	if cerr := t.ConstBytes(func(in []byte) {
		err = out.MutableBytes(func(o []byte) {
			for i := range rows {
				for j := range cols {
					copy(o[(j*rows+i)*size:(j*rows+i+1)*size], in[(i*cols+j)*size:(i*cols+j+1)*size])
				}
			}
		})
	}); cerr != nil {
		return nil, cerr
	}
	return out, err
}
