package callback

// configured is the part every callback built from a configuration C
// shares: the configuration in effect and what was wrong with it.
// Embedded, it gives the callback Validate, which volt.NewTrainer calls
// (volt.CallbackValidator); newCallback builds the callback. Config stays
// the callback's own, so that its documentation names its type (and the
// defaults it fills in).
type configured[C any] struct {
	cfg     C     // the constructor's configuration, with the defaults its zero values stand for filled in
	invalid error // the bad fields of the configuration, or nil
}

// Validate reports the bad fields of the configuration the callback's
// constructor was given, as volt.NewTrainer does, or nil.
func (c *configured[C]) Validate() error { return c.invalid }

// keep records the configuration in effect and what was wrong with it.
func (c *configured[C]) keep(cfg C, invalid error) { c.cfg, c.invalid = cfg, invalid }

// newCallback returns the callback build makes of cfg, filling in the
// defaults of cfg's zero values in place (a build that reads its
// callback's cfg while building sets it itself), with that configuration
// kept. A bad field is no error here: the callback keeps the configuration
// as given and the error, which its Validate reports, so that NewTrainer
// names the callback and the field.
func newCallback[C, T any, P interface {
	*T
	keep(C, error)
}](cfg C, build func(cfg *C) (P, error)) P {
	given := cfg
	cb, err := build(&cfg)
	if err != nil {
		cb, cfg = new(T), given
	}
	cb.keep(cfg, err)
	return cb
}
