package dist

import "syscall"

// setParentDeathSignal makes the kernel send sig to the child when the
// thread that started it ends (Linux's PR_SET_PDEATHSIG).
func setParentDeathSignal(attr *syscall.SysProcAttr, sig syscall.Signal) { attr.Pdeathsig = sig }
