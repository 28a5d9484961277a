package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"regexp"
	"strings"

	"github.com/voltml/volt"
)

// checkTrainer checks the trainer settings with volt's own validation
// (volt.NewTrainer), so that the rules live in one place, and locates each
// problem: a field that is wrong alone is reported on its key where it was
// set; a problem between fields (MinEpochs above MaxEpochs) names every key
// involved and where each was set.
func (s *schema) checkTrainer(rc *runConfig) []error {
	var errs []error
	reported := map[string]bool{}
	for _, p := range s.params {
		if p.goField == "MaxEpochs" && p.target.IsZero() && p.setAt != (location{}) {
			errs = append(errs, p.setAt.errorf(p.key, "%s", zeroMaxEpochs))
			reported[zeroMaxEpochs] = true
			continue
		}
		if p.goField == "" || p.goField == "Callbacks" || p.goField == "Loggers" || p.target.IsZero() {
			continue
		}
		var one volt.Config
		reflect.ValueOf(&one).Elem().FieldByName(p.goField).Set(p.target)
		for _, msg := range trainerProblems(one) {
			reported[msg] = true
			errs = append(errs, p.setAt.errorf(p.key, "%s", strings.TrimPrefix(msg, "Config."+p.goField+": ")))
		}
	}
	all := rc.trainer
	all.Callbacks, all.Loggers = nil, nil
	for _, msg := range trainerProblems(all) {
		if reported[msg] {
			continue
		}
		var where []string
		for _, m := range configField.FindAllStringSubmatch(msg, -1) {
			for _, p := range s.params {
				if p.goField == m[1] {
					where = append(where, fmt.Sprintf("%s (%s)", p.key, p.setAt))
				}
			}
		}
		errs = append(errs, &Error{Key: strings.Join(where, ", "), Problem: msg})
	}
	if rc.trainer.DisableLoggers && len(rc.loggers) > 0 {
		p := s.byKey[keyTrainer+".disable_loggers"]
		errs = append(errs, &Error{Key: fmt.Sprintf("%s (%s), trainer.loggers (%s)", p.key, p.setAt, s.byKey[keyTrainer+".loggers"].setAt),
			Problem: "loggers are disabled and listed; use one or the other"})
	}
	return errs
}

// zeroMaxEpochs is the problem with an explicit max_epochs of 0: Lightning
// trains no epoch, while volt.Config reads 0 as its default (1000 epochs),
// so taking it silently would train for 1000. It is volt.EpochsFlag's
// reason, with the subcommand that evaluates without training.
var zeroMaxEpochs = volt.ErrZeroEpochs.Error() + "; to evaluate without training, run the validate subcommand"

// configField finds the volt.Config fields a message names.
var configField = regexp.MustCompile(`Config\.(\w+)`)

// trainerProblems returns volt's validation messages for cfg, one per
// problem, without side effects (no logger is created).
func trainerProblems(cfg volt.Config) []string {
	cfg.DisableLoggers = true
	cfg.Log = slog.New(slog.DiscardHandler)
	_, err := volt.NewTrainer(cfg)
	if err == nil {
		return nil
	}
	if inner := errors.Unwrap(err); inner != nil {
		err = inner
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range joined.Unwrap() {
			out = append(out, e.Error())
		}
		return out
	}
	return []string{err.Error()}
}
