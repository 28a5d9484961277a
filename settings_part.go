package volt

import "fmt"

// settingsPart is the state part of the run's settings that a resumed Fit
// takes from its checkpoint whatever its Config says: the seed (which the
// loaders' shuffling and dropout continue from) and the gradient
// accumulation in use (which SetAccumulateGradBatches or a callback may
// have changed), with the saving run's Config.AccumulateGradBatches.
type settingsPart struct{ cfg *resolved }

func (settingsPart) stateKey() string { return "settings" }

func (settingsPart) members() []string {
	return []string{"seed", "accumulate_grad_batches", "config_accumulate_grad_batches"}
}

func (p settingsPart) save(st *stateDoc) error {
	if err := st.put("seed", p.cfg.seed); err != nil {
		return err
	}
	if err := st.put("accumulate_grad_batches", p.cfg.accumulate); err != nil {
		return err
	}
	return st.putNonEmpty("config_accumulate_grad_batches", max(p.cfg.AccumulateGradBatches, 1))
}

func (p settingsPart) load(st *stateDoc) error {
	var seed uint64
	var accumulate, configAccumulate int
	for _, m := range []struct {
		member string
		value  any
	}{{"seed", &seed}, {"accumulate_grad_batches", &accumulate}, {"config_accumulate_grad_batches", &configAccumulate}} {
		if _, err := st.get(m.member, m.value); err != nil {
			return err
		}
	}
	cfg := p.cfg
	if seed != cfg.seed {
		st.info("volt: resuming with the checkpoint's seed", "seed", seed, "was", cfg.seed)
		cfg.seed = seed
	}
	if c, mine := configAccumulate, max(cfg.AccumulateGradBatches, 1); c != 0 && c != mine {
		st.warnOnce("accumulate-"+st.path, fmt.Sprintf("volt: the checkpoint's run had Config.AccumulateGradBatches=%d, this Config has %d; "+
			"the resumed run goes on as the saved one did (accumulating %d batches, the same optimizer steps), its accumulators hold sums of that many; "+
			"to change it from an epoch on, call Trainer.SetAccumulateGradBatches in OnTrainEpochStart (callback.GradientAccumulationScheduler)",
			c, mine, max(accumulate, 1)), "checkpoint", st.path)
	}
	cfg.accumulate = max(accumulate, 1)
	return nil
}
