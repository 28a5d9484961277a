// Command finetune fine-tunes torchvision's ResNet-18, read from a PyTorch
// state dict, on examples/imagefolder's data (MNIST written as a folder of
// PNG images per class), as a Lightning user fine-tunes a torchvision
// model:
//
//	/usr/bin/python3 examples/finetune/resnet18_weights.py resnet18.pt
//	GOTOOLCHAIN=auto GOEXPERIMENT=simd go run ./examples/finetune -weights resnet18.pt
//
// The state dict loads into torchvision.ResNet18 but for its 1000-class
// fc, which statedict.Exclude("fc.") leaves out so that a new 10-class head
// keeps torch's initialisation: NonStrict, as torch's
// load_state_dict(strict=False), and the report checked, so that any other
// missing or unexpected key is an error naming it. callback.BackboneFinetuning
// freezes the backbone, named with torch's names ("conv1", "bn1",
// "layer*"), for the first -unfreeze-at epochs while the head (and, as in
// Lightning, the batch norms) train with Adam; then the backbone joins the
// optimizer as a parameter group at a tenth of the learning rate, doubled
// each epoch up to the head's. Images are decoded, resized to -size (3
// channels: the PNGs are gray) and normalised with ImageNet's statistics on
// the loader's workers. The last line printed is val_acc=….
//
// resnet18_weights.py writes torchvision's random initialisation (no
// pretrained weights can be downloaded here); a pretrained state dict
// written the same way loads the same.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"time"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/examples/internal/cmdexit"
	"github.com/voltml/volt/examples/internal/digits"
	"github.com/voltml/volt/examples/internal/mnistfolder"
	"github.com/voltml/volt/optim"
	"github.com/voltml/volt/statedict"
	"github.com/voltml/volt/torchvision"
)

func main() { cmdexit.Exit("finetune", run(os.Args[1:], os.Stdout, os.Stderr)) }

// backbone is ResNet-18 but its classifier, in torch's names.
var backbone = []string{"conv1", "bn1", "layer*"}

// model is torchvision's ResNet-18 with a new 10-class head, its other
// weights from a torch state dict.
type model struct {
	weights *statedict.StateDict
	lr      float64
}

// logits are the class scores of images [N, 3, H, W]; the first trace
// loads the weights.
func (m *model) logits(s *volt.Step, images *graph.Node) *graph.Node {
	defer m.weights.Apply(s.Scope(), statedict.NonStrict(), statedict.Exclude("fc."), statedict.OnReport(newHeadOnly))
	return torchvision.ResNet18(s.Scope(), images, 10)
}

// newHeadOnly panics (an error of the step) unless the new head is all the
// state dict did not give: torch's
//
//	missing, unexpected = model.load_state_dict(sd, strict=False)
//	assert missing == ["fc.weight", "fc.bias"] and not unexpected
func newHeadOnly(r *statedict.Report) {
	if !slices.Equal(r.Missing, []string{"fc.weight", "fc.bias"}) || len(r.Unexpected) > 0 {
		panic(fmt.Sprintf("the weights are not torchvision's ResNet-18 (but for fc): %s", r))
	}
}

// TrainingStep implements volt.Module.
func (m *model) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	return digits.TrainingStep(s, b, m.logits)
}

// ValidationStep implements volt.ValidationStepper.
func (m *model) ValidationStep(s *volt.Step, b volt.Batch) { digits.ValidationStep(s, b, m.logits) }

// ConfigureOptimizers implements volt.OptimizerConfigurer.
func (m *model) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.Adam(m.lr)) }

// run writes the folders and fine-tunes as the flags in args say, printing
// the results to out and progress to errOut.
func run(args []string, out, errOut io.Writer) error {
	flags := flag.NewFlagSet("finetune", flag.ContinueOnError)
	weightsPath := flags.String("weights", "", "torchvision ResNet-18 state dict (.pt from torch.save, or .safetensors); write one with /usr/bin/python3 examples/finetune/resnet18_weights.py resnet18.pt")
	dir := flags.String("dir", "", "folder to write the images to and keep (new, empty or written by imagefolder or finetune); empty: a temporary folder, removed at the end")
	perClass := flags.Int("train-per-class", 50, "training images per digit")
	valPerClass := flags.Int("val-per-class", 30, "validation images per digit (from MNIST's test set)")
	size := flags.Int("size", 32, "image side the 28x28 digits are resized to")
	epochs := volt.EpochsFlag(flags, "epochs", 3, "training epochs")
	unfreezeAt := flags.Int("unfreeze-at", 1, "epoch at whose start the backbone is unfrozen (>= 1)")
	lr := flags.Float64("lr", 1e-3, "Adam learning rate of the head (the backbone's starts at a tenth of it)")
	batch := flags.Int("batch", 32, "batch size")
	workers := flags.Int("workers", 2, "loader goroutines decoding and transforming images")
	seed := flags.Uint64("seed", 42, "seed for the new head, shuffling and the folders")
	root := flags.String("root", ".", "where volt_logs/ is written")
	progress := flags.Bool("progress", true, "show progress on stderr")
	flags.SetOutput(errOut)
	if err := flags.Parse(args); err != nil {
		return err
	}
	switch {
	case *weightsPath == "":
		return fmt.Errorf("-weights is required: a torchvision ResNet-18 state dict, written by /usr/bin/python3 examples/finetune/resnet18_weights.py resnet18.pt")
	case *perClass < 1 || *valPerClass < 1:
		return fmt.Errorf("-train-per-class and -val-per-class must be >= 1, got %d and %d", *perClass, *valPerClass)
	case *size < 28:
		return fmt.Errorf("-size must be >= 28 (the digits' side), got %d", *size)
	case *unfreezeAt < 1:
		return fmt.Errorf("-unfreeze-at must be >= 1, got %d", *unfreezeAt)
	}
	weights, err := statedict.Read(*weightsPath)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "read %d tensors from %s\n", weights.Len(), *weightsPath)

	folder, cleanup, err := mnistfolder.Folder(*dir, "volt-finetune-")
	if err != nil {
		return err
	}
	defer cleanup()
	start := time.Now()
	n, err := mnistfolder.Write(folder, *perClass, *valPerClass, false, *seed)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote %d PNG images to %s in %.1fs\n", n, folder, time.Since(start).Seconds())
	imagenet := &data.Normalize{Mean: []float32{0.485, 0.456, 0.406}, Std: []float32{0.229, 0.224, 0.225}}
	var sets [2]*data.ImageFolder
	for i, split := range []string{"train", "val"} {
		if sets[i], err = data.OpenImageFolder(filepath.Join(folder, split), data.Resize{Width: *size, Height: *size}); err != nil {
			return err
		}
		sets[i].Normalize = imagenet
	}
	dm := volt.Loaders{
		Train: &data.DataLoader{Dataset: sets[0], BatchSize: *batch, Shuffle: true, Workers: *workers},
		Val:   []data.Loader{&data.DataLoader{Dataset: sets[1], BatchSize: *batch, Workers: *workers}},
	}

	finetune := callback.NewBackboneFinetuning(callback.BackboneFinetuningConfig{Backbone: backbone, UnfreezeAtEpoch: *unfreezeAt})
	volt.SeedEverything(*seed)
	cfg := volt.Config{MaxEpochs: *epochs, DefaultRootDir: *root, Log: slog.New(slog.NewTextHandler(errOut, nil)),
		EnableProgressBar: volt.Ptr(*progress), Callbacks: []volt.Callback{finetune, epochReport{out, finetune}}}
	if *progress {
		cfg.Callbacks = append(cfg.Callbacks, callback.NewProgressBar(callback.ProgressBarConfig{Writer: errOut}))
	}
	trainer, err := volt.NewTrainer(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start = time.Now()
	if err := trainer.Fit(ctx, &model{weights: weights, lr: *lr}, dm); err != nil {
		return err
	}
	fmt.Fprintf(out, "fine-tuned %d epochs on %d images (%d classes, %dx%d) in %.1fs\n", *epochs, sets[0].Len(), len(sets[0].Classes),
		*size, *size, time.Since(start).Seconds())
	fmt.Fprintf(out, "val_acc=%.4f\n", trainer.CallbackMetrics()["val_acc"])
	return nil
}

// epochReport prints, at each epoch's end (after its validation), the
// epoch's accuracy and the backbone's state.
type epochReport struct {
	out      io.Writer
	finetune *callback.BackboneFinetuning
}

// OnTrainEpochEnd implements volt.OnTrainEpochEnd.
func (r epochReport) OnTrainEpochEnd(t *volt.Trainer) error {
	state := "frozen"
	if lr := r.finetune.LR(); lr > 0 {
		state = fmt.Sprintf("lr %.3g", lr)
	}
	fmt.Fprintf(r.out, "epoch %d: val_acc %.4f, backbone %s\n", t.CurrentEpoch(), t.CallbackMetrics()["val_acc"], state)
	return nil
}
