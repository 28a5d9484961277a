package callback

import "time"

// SetProgressBarClock makes p read the time of its refresh budget from now.
func SetProgressBarClock(p *ProgressBar, now func() time.Time) { p.now = now }
