package volt

import "fmt"

// defaultProgressBar is the ProgressBar Config.EnableProgressBar adds
// (nil when it is false or a ProgressReporter is in Callbacks).
func defaultProgressBar(c Config) (*ProgressBar, error) {
	enabled := c.EnableProgressBar == nil || *c.EnableProgressBar
	for i, cb := range c.Callbacks {
		if _, ok := cb.(ProgressReporter); ok {
			if !enabled {
				return nil, fmt.Errorf("Config.EnableProgressBar is false but Config.Callbacks[%d] (%T) shows progress: "+
					"remove one of them", i, cb)
			}
			return nil, nil
		}
	}
	if !enabled {
		return nil, nil
	}
	return NewProgressBar(ProgressBarConfig{}), nil
}

// callbacks are Config.Callbacks and the default progress bar.
func (t *Trainer) callbacks() []Callback {
	if t.defaultBar == nil {
		return t.cfg.Callbacks
	}
	return append(t.cfg.Callbacks[:len(t.cfg.Callbacks):len(t.cfg.Callbacks)], t.defaultBar)
}
