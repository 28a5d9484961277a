// Package torchvision is torchvision.models' ResNets built from package
// nn's torch-named layers and package batchnorm, with torchvision's
// module names, so that a torchvision state dict (torch.save of
// resnet18().state_dict(), read by package statedict) loads into them as
// it is and the same input gives torchvision's logits ([ResNet18],
// [ResNet34], or [ResNet] with other stage sizes):
//
//	weights, err := statedict.Read("resnet18.pt")
//	...
//	logits := func() *graph.Node {
//		defer weights.Apply(scope) // strict: every key, every shape
//		return torchvision.ResNet18(scope, images, 1000) // images [N, 3, H, W]
//	}()
//
// The variables under scope are torchvision's state_dict keys with "/"
// for ".": conv1/weight, bn1/running_mean, layer1/0/conv1/weight,
// layer2/0/downsample/0/weight, fc/bias, …. Fine-tuning names them as
// torch does (volt.Selects): the backbone is {"conv1", "bn1", "layer*"}
// for callback.BackboneFinetuning, "layer4" a ParamGroup's Params
// (examples/finetune). Twenty SGD fine-tuning steps match torch's losses
// within 2.4e-14 in float64 over every parameter, and within 3.4e-5 in
// float32 over the head and batch norms (TestResNet18FineTuningAsTorch64,
// TestResNet18FineTuningAsTorch, which say why float32 cannot be compared
// over the whole network).
package torchvision
