package volt

import (
	"fmt"
	"path"
	"strings"
)

// Selects reports whether selector selects the variable at varPath. The
// fields that choose variables (OptimizerSetup.Params, ParamGroup.Params,
// the finetuning callbacks' scopes) take selectors of two forms:
//
//   - a scope path, starting with "/": the variable at that path and every
//     variable below it ("/backbone" selects "/backbone/dense/weights");
//   - a PyTorch name, without "/": a module or parameter name as torch's
//     named_parameters() and state_dict() spell it, or a path.Match pattern
//     of one. It selects a variable when the variable's key (its path with
//     "/" as ".", as package statedict names it: "/layer4/0/conv1/weight"
//     is "layer4.0.conv1.weight") or one of the key's module prefixes
//     ("layer4", "layer4.0", "layer4.0.conv1") matches it: "layer4"
//     selects all of layer4, "fc.bias" one parameter, "layer*" every
//     stage, "*.bias" every bias.
//
// A name selects from the root scope, as torch names the parameters of
// the LightningModule: "conv1" is "/conv1", not "/layer1/0/conv1".
func Selects(selector, varPath string) bool {
	if strings.HasPrefix(selector, "/") {
		return varPath == selector || strings.HasPrefix(varPath, strings.TrimSuffix(selector, "/")+"/")
	}
	key := strings.ReplaceAll(strings.TrimPrefix(varPath, "/"), "/", ".")
	for i := 1; i <= len(key); i++ {
		if i < len(key) && key[i] != '.' {
			continue
		}
		if ok, _ := path.Match(selector, key[:i]); ok {
			return true
		}
	}
	return false
}

// CheckSelector reports what is wrong with selector, or nil: it must be a
// scope path starting with "/" or a PyTorch name or pattern without "/"
// (see Selects).
func CheckSelector(selector string) error {
	switch {
	case selector == "":
		return fmt.Errorf("empty: give a scope path such as \"/backbone\" or a PyTorch name such as \"layer4\"")
	case strings.HasPrefix(selector, "/"):
		return nil
	case strings.Contains(selector, "/"):
		return fmt.Errorf("%q is neither a scope path (which starts with \"/\") nor a PyTorch name (which has no \"/\", its parts joined by \".\")", selector)
	}
	if _, err := path.Match(selector, ""); err != nil {
		return fmt.Errorf("%q is not a valid name pattern: %v", selector, err)
	}
	return nil
}

// selectsAny reports whether any of selectors selects varPath.
func selectsAny(selectors []string, varPath string) bool {
	for _, s := range selectors {
		if Selects(s, varPath) {
			return true
		}
	}
	return false
}
