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
	return fmt.Errorf("checkpoint %s does not fit the module: shape mismatch: %s (checkpoint %s, module %s)", l.path, m[1], m[2], m[3])
}
