package gokernels

import (
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/voltml/volt/internal/onednn"
)

// convsWithoutOneDNN counts the convolutions RunsConv would have left to
// oneDNN had it loaded (not those VOLT_ONEDNN=off keeps off it).
var (
	convsWithoutOneDNN atomic.Int64
	noticeOnce         sync.Once
)

// NoticeMessage begins the warning NoticeWithoutOneDNN logs.
const NoticeMessage = "volt: convolutions run on volt's Go lowering, not on oneDNN"

// NoticeWithoutOneDNN logs to log at warning level, the first time in
// the process that a graph built so far has a convolution oneDNN would
// have run, that it could not be loaded, why, and how to install it or
// silence the message. Without it, a machine lacking libdnnl.so.2 runs
// convolutional networks at about half the speed with no sign. It costs
// one atomic load when there is nothing to say.
func NoticeWithoutOneDNN(log *slog.Logger) {
	if convsWithoutOneDNN.Load() == 0 {
		return
	}
	noticeOnce.Do(func() {
		log.Warn(NoticeMessage+", which runs convolutional networks about twice as fast: install it "+
			"(Debian/Ubuntu: apt install libdnnl2), or set VOLT_ONEDNN=off to silence this message", "reason", onednn.Available())
	})
}

// ResetNoticeForTest forgets the convolutions counted and whether the
// notice was logged.
func ResetNoticeForTest() {
	convsWithoutOneDNN.Store(0)
	noticeOnce = sync.Once{}
}
