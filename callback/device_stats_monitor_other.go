//go:build !unix

package callback

import "time"

// cpuTimes is not available on this system.
func cpuTimes() (user, sys time.Duration, ok bool) { return 0, 0, false }
