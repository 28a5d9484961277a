package volt

// LastModelPather is implemented by callbacks that keep a copy of the
// newest checkpoint (ModelCheckpoint with SaveLast: last.ckpt).
type LastModelPather interface{ LastModelPath() string }

// BestModelPath is Lightning's trainer.checkpoint_callback.best_model_path:
// the best checkpoint of the first callback that tracks one
// (ModelCheckpoint.BestModelPath), else, under the default checkpointing, the newest file it saved
// (<LogDir>/checkpoints/epoch=E-step=S.ckpt, which Lightning's default
// ModelCheckpoint also reports as best); "" when nothing was saved.
func (t *Trainer) BestModelPath() string {
	for _, cb := range t.cfg.Callbacks {
		if b, ok := cb.(BestModelPather); ok {
			return b.BestModelPath()
		}
	}
	return t.ckpt.defaultSaved
}

// LastModelPath is Lightning's trainer.checkpoint_callback.last_model_path:
// the last.ckpt of the first callback that keeps one (a ModelCheckpoint
// with SaveLast), "" otherwise, as in Lightning, whose default
// checkpointing keeps no last.ckpt either. LastCheckpoint is the file this
// trainer saved last, whatever saved it.
func (t *Trainer) LastModelPath() string {
	for _, cb := range t.cfg.Callbacks {
		if l, ok := cb.(LastModelPather); ok {
			return l.LastModelPath()
		}
	}
	return ""
}
