package callback

import (
	"fmt"

	"github.com/voltml/volt"
)

// ProgressBar shows training progress as Lightning's TQDMProgressBar: it is
// volt.ProgressBar (the trainer adds one by default, see
// volt.Config.EnableProgressBar); add one to Config.Callbacks to configure
// it.
type ProgressBar = volt.ProgressBar

// ProgressBarConfig configures ProgressBar.
type ProgressBarConfig = volt.ProgressBarConfig

// DefaultRefreshInterval is ProgressBarConfig.RefreshInterval's default:
// tqdm's mininterval.
const DefaultRefreshInterval = volt.DefaultRefreshInterval

// NewProgressBar validates cfg and returns the callback.
func NewProgressBar(cfg ProgressBarConfig) (*ProgressBar, error) {
	p, err := volt.NewProgressBar(cfg)
	if err != nil {
		return nil, fmt.Errorf("callback.%w", err)
	}
	return p, nil
}
