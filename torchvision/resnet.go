package torchvision

import (
	"fmt"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/batchnorm"
	"github.com/voltml/volt/nn"
)

// ResNet18 is torchvision.models.resnet18(num_classes=classes) on images
// x [N, 3, H, W] (NCHW, normalised as the weights expect): its logits [N,
// classes]. In a training graph its batch normalisations use the batch's
// statistics and update their running ones; elsewhere they use the
// running statistics (torch's train() and eval()).
func ResNet18(scope *model.Scope, x *graph.Node, classes int) *graph.Node {
	return ResNet(scope, x, []int{2, 2, 2, 2}, classes)
}

// ResNet34 is torchvision.models.resnet34(num_classes=classes).
func ResNet34(scope *model.Scope, x *graph.Node, classes int) *graph.Node {
	return ResNet(scope, x, []int{3, 4, 6, 3}, classes)
}

// ResNet is torchvision's ResNet(BasicBlock, blocks, num_classes=classes):
// a 7×7 stride-2 stem, a 3×3 stride-2 max pool, four stages of blocks[i]
// basic blocks (64, 128, 256, 512 channels; stages 2–4 start with stride
// 2 and a 1×1 downsample), a global average pool and fc.
func ResNet(scope *model.Scope, x *graph.Node, blocks []int, classes int) *graph.Node {
	if x.Rank() != 4 || len(blocks) != 4 || classes < 1 {
		panic(fmt.Sprintf("torchvision.ResNet: x must be [N, C, H, W], blocks four stage sizes and classes positive; got %s, %v, %d", x.Shape(), blocks, classes))
	}
	x = nn.Conv2d(scope.In("conv1"), x, 64, 7).Stride(2).Padding(3).NoBias().Done()
	x = nn.ReLU(batchNorm(scope.In("bn1"), x))
	x = nn.MaxPool2d(x, 3).Stride(2).Padding(1).Done()
	for stage, n := range blocks {
		channels, stride := 64<<stage, 1
		if stage > 0 {
			stride = 2
		}
		layer := scope.In("layer%d", stage+1)
		for i := range n {
			if i > 0 {
				stride = 1
			}
			x = basicBlock(layer.In("%d", i), x, channels, stride)
		}
	}
	x = nn.AdaptiveAvgPool2d(x, 1, 1)
	x = graph.Reshape(x, x.Shape().Dim(0), -1)
	return nn.TorchLinear(scope.In("fc"), x, classes, true)
}

// basicBlock is torchvision's BasicBlock: two 3×3 convolutions with batch
// norms, and the input added back (through downsample, a 1×1 convolution
// and a batch norm, where the stride or the width changes).
func basicBlock(scope *model.Scope, x *graph.Node, channels, stride int) *graph.Node {
	identity := x
	y := nn.Conv2d(scope.In("conv1"), x, channels, 3).Stride(stride).Padding(1).NoBias().Done()
	y = nn.ReLU(batchNorm(scope.In("bn1"), y))
	y = nn.Conv2d(scope.In("conv2"), y, channels, 3).Padding(1).NoBias().Done()
	y = batchNorm(scope.In("bn2"), y)
	if stride != 1 || x.Shape().Dim(1) != channels {
		down := scope.In("downsample")
		identity = nn.Conv2d(down.In("0"), x, channels, 1).Stride(stride).NoBias().Done()
		identity = batchNorm(down.In("1"), identity)
	}
	return nn.ReLU(graph.Add(y, identity))
}

// batchNorm is torch.nn.BatchNorm2d over axis 1.
func batchNorm(scope *model.Scope, x *graph.Node) *graph.Node {
	return batchnorm.New(scope, x, 1).Done()
}
