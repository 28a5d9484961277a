package cli

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/pflag"
)

// usageIndent is the indentation of a flag's help under its name.
const usageIndent = "      "

// helpOverrides replace, for the command line, the doc sentences of the
// volt.Config fields that read badly there (four fields sharing one
// sentence, Go constants a flag does not take).
var helpOverrides = map[string]string{
	"LimitTrainBatches":     "Training batches per epoch: an int (batches) or a float (a fraction of the loader); 0 turns training off.",
	"LimitValBatches":       "Validation batches per loader, as limit_train_batches.",
	"LimitTestBatches":      "Test batches per loader, as limit_train_batches.",
	"LimitPredictBatches":   "Predict batches per loader, as limit_train_batches.",
	"OverfitBatches":        "Trains on the same first batches every epoch (shuffling off) and validates on them: an int (batches) or a float (a fraction of the training loader).",
	"ShardUneven":           "How the training loader is sharded across ranks when its length is not a multiple of the world size: pad_repeat (repeat the first samples, as Lightning's DistributedSampler) or drop_tail.",
	"GradientClipAlgorithm": "norm (the global 2-norm over all the optimizer's parameters) or value (each element to ±gradient_clip_val).",
	"DisableModelSummary":   "Turns off the table of the model's layers printed when Fit starts.",
}

// usageWidth is the width usage text is wrapped to: $COLUMNS when it is a
// number of at least 40, else 80.
func usageWidth() int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n >= 40 {
		return n
	}
	return 80
}

// writeUsage writes every flag of fs as "  --key type (default: value)",
// then its help wrapped to width and indented.
func writeUsage(w io.Writer, fs *pflag.FlagSet, width int) {
	fs.VisitAll(func(f *pflag.Flag) {
		line := "  "
		if f.Shorthand != "" {
			line += "-" + f.Shorthand + ", "
		}
		line += "--" + f.Name
		typ := f.Value.Type()
		if typ != "bool" {
			line += " " + typ
		}
		if def := f.Value.String(); def != "" && def != "false" && def != "[]" && f.Name != "help" {
			line += " (default: " + def + ")"
		}
		fmt.Fprintln(w, line)
		for _, l := range wrap(f.Usage, width-len(usageIndent)) {
			fmt.Fprintln(w, usageIndent+l)
		}
	})
}

// wrap breaks text into lines of at most width characters at spaces (a
// longer word stands alone on its line).
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// flagHelp returns the command-line help of a volt.Config field from its
// doc sentence: the override, else the sentence without the Go name it
// starts with ("MaxEpochs stops training…" → "Stops training…").
func flagHelp(goField, doc string) string {
	if h, ok := helpOverrides[goField]; ok {
		return h
	}
	rest, ok := strings.CutPrefix(doc, goField+" ")
	if !ok {
		return doc
	}
	for _, verb := range []string{"is ", "are "} {
		if r, ok := strings.CutPrefix(rest, verb); ok {
			rest = r
			break
		}
	}
	first, size := utf8.DecodeRuneInString(rest)
	return string(unicode.ToUpper(first)) + rest[size:]
}
