//go:build !linux

package dist

import "syscall"

// setParentDeathSignal does nothing where the kernel has no parent-death
// signal.
func setParentDeathSignal(*syscall.SysProcAttr, syscall.Signal) {}
