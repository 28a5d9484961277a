package volt

import (
	"fmt"
	"regexp"
)

// reuseShapeClash matches GoMLX's panic when a step asks for a variable
// that exists with another shape (model.Store.VariableWithShape).
var reuseShapeClash = regexp.MustCompile(`requested to reuse variable "([^"]+)", but with different shape from original: previous shape=(\S+ ?\[[^\]]*\]|\S+), requested shape=(\S+ ?\[[^\]]*\]|\S+)`)

// explainShapeClash turns GoMLX's "reuse variable with different shape"
// failure of a step, for a variable the last restore created from a
// checkpoint (one whose variables did not exist in the trainer yet), into
// an error naming the checkpoint, the variable and both shapes. Other
// errors are returned as they are.
func (t *Trainer) explainShapeClash(err error) error {
	l := t.ckpt.restoredFrom
	if err == nil || l == nil {
		return err
	}
	m := reuseShapeClash.FindStringSubmatch(err.Error())
	if m == nil || !l.loaded[m[1]] {
		return err
	}
	// The words of restore's own check, for variables that existed.
	return fmt.Errorf("checkpoint %s does not fit the module: %s", l.path, mismatch(m[1], m[2], m[3]))
}

// shapeString splits a shape as GoMLX writes it, "(BFloat16)[4, 5]", into
// its dtype and its dimensions.
var shapeString = regexp.MustCompile(`^\((\w+)\)(.*)$`)

// precisionOf names the Config.Precision whose weights are in dtype.
var precisionOf = map[string]string{"BFloat16": "bf16-true", "Float16": "16-true", "Float32": "32-true", "Float64": "64-true"}

// mismatch says how variable name differs between a checkpoint (shape
// ckpt) and the module (shape module), both as GoMLX writes shapes: only
// in dtype (a checkpoint of another precision, with what would run it), or
// in shape.
func mismatch(name, ckpt, module string) string {
	c, m := shapeString.FindStringSubmatch(ckpt), shapeString.FindStringSubmatch(module)
	if c == nil || m == nil || c[2] != m[2] || c[1] == m[1] {
		return fmt.Sprintf("shape mismatch: %s (checkpoint %s, module %s)", name, ckpt, module)
	}
	hint := ""
	if p, ok := precisionOf[c[1]]; ok {
		hint = fmt.Sprintf("; its weights are %s: run it with Config.Precision %q, or predict with volt.LoadPredictor, which computes in the weights' dtype", c[1], p)
	}
	return fmt.Sprintf("dtype mismatch: %s (checkpoint %s, module %s: the same dimensions in another precision)%s", name, ckpt, module, hint)
}
