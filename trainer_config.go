package volt

// Config returns the configuration the trainer was made with, its Seed set to
// the seed the trainer uses (a restored checkpoint's after a resume), so that a
// second trainer made from it — the tuner's — initialises variables and
// shuffles data alike.
func (t *Trainer) Config() Config {
	c := t.cfg.Config
	seed := t.cfg.seed
	c.Seed = &seed
	return c
}
