package cli

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/fieldkey"
)

// runConfig is everything a run is configured with: what print-config
// writes and config.yaml records.
type runConfig struct {
	seed      uint64
	trainer   volt.Config
	callbacks callbackSpecs
	loggers   loggerSpecs
	model     reflect.Value // the module (a pointer, for its fields to be set)
	data      reflect.Value // the data module
	ckptPath  string
}

// Top-level keys and sections.
const (
	keySeed     = "seed_everything"
	keyTrainer  = "trainer"
	keyModel    = "model"
	keyData     = "data"
	keyCkptPath = "ckpt_path"
)

// configOnlyFields are the volt.Config fields a config file cannot set:
// writers, loggers and profilers of Go values. Callbacks and Loggers are set by name
// (trainer.callbacks, trainer.loggers).
var configOnlyFields = []string{"SummaryWriter", "Log", "CustomProfiler"}

// param is one key of the schema: a value a file, a flag or the
// environment can set.
type param struct {
	key     string
	help    string
	target  reflect.Value // addressable
	goField string        // the volt.Config field, for trainer keys
	setAt   location      // where the value in effect came from (zero for defaults)
}

// schema lists every key of a run's config and the sections that group them.
type schema struct {
	params   []*param
	byKey    map[string]*param
	sections map[string][]string // section key → its keys (params and sections), in order; "" is the top
	reg      *registry
}

// newSchema binds the keys of rc: seed_everything, trainer.* (every
// volt.Config field but configOnlyFields), model.* and data.* (the
// exported fields of the module and data module), ckpt_path.
func newSchema(rc *runConfig, reg *registry) (*schema, error) {
	s := &schema{byKey: map[string]*param{}, sections: map[string][]string{}, reg: reg}
	s.add(keySeed, "seed of weights and shuffling (volt.SeedEverything)", reflect.ValueOf(&rc.seed).Elem(), "")
	s.section("", keyTrainer)
	cfg := reflect.ValueOf(&rc.trainer).Elem()
	for i := range cfg.NumField() {
		f := cfg.Type().Field(i)
		key := keyTrainer + "." + snakeCase(f.Name)
		help := flagHelp(f.Name, configHelp[f.Name])
		if help == "" {
			help = "volt.Config." + f.Name
		}
		switch {
		case f.Name == "Callbacks":
			s.add(key, "callbacks by name, each with its options", reflect.ValueOf(&rc.callbacks).Elem(), f.Name)
		case f.Name == "Loggers":
			s.add(key, "loggers by name, each with its options", reflect.ValueOf(&rc.loggers).Elem(), f.Name)
		case slices.Contains(configOnlyFields, f.Name):
		case supported(f.Type):
			s.add(key, help, cfg.Field(i), f.Name)
		default:
			return nil, fmt.Errorf("cli: volt.Config.%s (%s) has no config form", f.Name, f.Type)
		}
	}
	for _, sec := range []struct {
		key string
		v   reflect.Value
	}{{keyModel, rc.model}, {keyData, rc.data}} {
		s.section("", sec.key)
		if sec.v.Kind() == reflect.Struct && len(structFields(sec.v.Type())) > 0 {
			return nil, fmt.Errorf("cli: the %s is a %s value, whose fields a config cannot set; return a *%[2]s", sec.key, sec.v.Type())
		}
		if sec.v.Kind() == reflect.Pointer && sec.v.Elem().Kind() == reflect.Struct {
			if err := s.addStruct(sec.key, sec.v.Elem()); err != nil {
				return nil, err
			}
		}
	}
	s.add(keyCkptPath, "checkpoint to resume Fit from, or to load for validate, test, predict and export", reflect.ValueOf(&rc.ckptPath).Elem(), "")
	return s, nil
}

// addStruct adds the fields of struct v under section key, a plain struct
// field becoming a section of its own.
func (s *schema) addStruct(key string, v reflect.Value) error {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, help, skip, explicit := fieldKey(f)
		switch {
		case skip:
		case f.Anonymous && !explicit && f.Type.Kind() == reflect.Struct:
			if err := s.addStruct(key, v.Field(i)); err != nil {
				return err
			}
		case isGroup(f.Type):
			sub := key + "." + name
			s.section(key, sub)
			if err := s.addStruct(sub, v.Field(i)); err != nil {
				return err
			}
		case supported(f.Type):
			s.add(key+"."+name, help, v.Field(i), "")
		case explicit:
			return fmt.Errorf("cli: %s (%s.%s) is tagged volt:%q but a config cannot hold a %s", key+"."+name, t, f.Name, name, f.Type)
		}
	}
	return nil
}

// add adds a key bound to target.
func (s *schema) add(key, help string, target reflect.Value, goField string) {
	p := &param{key: key, help: help, target: target, goField: goField}
	s.params = append(s.params, p)
	s.byKey[key] = p
	parent := ""
	if i := strings.LastIndexByte(key, '.'); i >= 0 {
		parent = key[:i]
	}
	s.sections[parent] = append(s.sections[parent], key)
}

// section adds section key under parent.
func (s *schema) section(parent, key string) {
	s.sections[parent] = append(s.sections[parent], key)
	if _, ok := s.sections[key]; !ok {
		s.sections[key] = nil
	}
}

// keys returns every key and section, for suggestions.
func (s *schema) keys() []string {
	var out []string
	for _, p := range s.params {
		out = append(out, p.key)
	}
	for k := range s.sections {
		if k != "" {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

//go:generate go run ./internal/genhelp ../config.go config_help.go

// snakeCase turns a Go field name into a config key (fieldkey.SnakeCase:
// the rule volt.LoadModule also uses).
func snakeCase(name string) string { return fieldkey.SnakeCase(name) }

// fieldKey returns the config key of a struct field and its help text
// (fieldkey.Of): the name from a `volt:"name"` tag, else the field name in
// snake case; skip is true for unexported fields and `volt:"-"`. explicit
// says the tag named it.
func fieldKey(f reflect.StructField) (key, help string, skip, explicit bool) {
	return fieldkey.Of(f)
}
