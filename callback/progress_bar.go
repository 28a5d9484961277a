package callback

import (
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

// NewProgressBar returns the callback for cfg (volt.NewProgressBar). A bad
// field is no error here: NewTrainer reports it, naming the field, as does
// Validate.
func NewProgressBar(cfg ProgressBarConfig) *ProgressBar { return volt.NewProgressBar(cfg) }
