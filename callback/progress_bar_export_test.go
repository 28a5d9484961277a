package callback

import "time"

// SetProgressBarClock makes p read the time of its bars from now.
func SetProgressBarClock(p *ProgressBar, now func() time.Time) { p.SetClock(now) }
