package logger

// flushCadence says when buffered rows are due to reach the file: at the
// first row at or after each multiple of every optimization steps (rows at
// steps 49, 99, 149, … with every 100: at 99, 199, …), Lightning's
// flush_logs_every_n_steps, whatever the trainer's logging cadence. A killed
// run then loses at most the rows of the last every steps.
type flushCadence struct {
	every int64
	next  int64 // the step at or after which the next flush is due
	set   bool
}

// due reports whether a row logged at step makes the buffer due, and if so
// moves on to the next boundary.
func (c *flushCadence) due(step int64) bool {
	if c.every <= 0 {
		return false
	}
	if !c.set {
		c.next, c.set = c.every-1, true
	}
	if step < c.next {
		return false
	}
	c.next = ((step+1)/c.every+1)*c.every - 1
	return true
}
