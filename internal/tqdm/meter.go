// Package tqdm formats progress-bar lines as tqdm 4.64 does with the
// bar_format of Lightning 2.2.5's TQDMProgressBar:
//
//	{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_noinv_fmt}{postfix}]
//
// and Lightning's Tqdm.format_num for the postfix values.
// testdata/lightning/progress_bar/meter_cases.json holds lines tqdm itself
// formatted, which the tests compare with.
package tqdm

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/voltml/volt/internal/pyfloat"
)

// Item is one name=value pair of a bar's postfix.
type Item struct {
	Name  string
	Value string // already formatted: see Num and Int
}

// Int formats an integer postfix value (Lightning's v_num).
func Int(v int64) string { return strconv.FormatInt(v, 10) }

// Num formats a float postfix value as Lightning's Tqdm.format_num: tqdm's
// format_num ({:.3g}, "e-08" as "e-8", Python's repr when it is shorter),
// then padded with zeros to 5 characters when not in exponent form
// ("4.39" → "4.390", "2" → "2.000").
func Num(v float64) string {
	f := strings.NewReplacer("+0", "+", "-0", "-").Replace(pyFormatG3(v))
	n := pyRepr(v)
	if len(f) < len(n) {
		n = f
	}
	if strings.Contains(n, "e") || math.IsInf(v, 0) || math.IsNaN(v) {
		return n
	}
	if !strings.Contains(n, ".") && len(n) < padSize {
		n += "."
	}
	if len(n) < padSize {
		n += strings.Repeat("0", padSize-len(n))
	}
	return n
}

// padSize is Lightning's _PAD_SIZE.
const padSize = 5

// pyFormatG3 is Python's '{0:.3g}'.format(v).
func pyFormatG3(v float64) string { return pyfloat.Format(v, 3) }

// pyRepr is Python's repr of a float: the shortest digits that read back,
// in exponent form when the exponent is below -4 or at least 16.
func pyRepr(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return pyfloat.Format(v, -1)
	case v == 0:
		if math.Signbit(v) {
			return "-0.0"
		}
		return "0.0"
	}
	e := strconv.FormatFloat(v, 'e', -1, 64)
	exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if exp < -4 || exp >= 16 {
		return e
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// Interval is tqdm's format_interval: [H:]MM:SS of whole seconds.
func Interval(seconds float64) string {
	t := int(seconds)
	m, s := t/60, t%60
	h, m := m/60, m%60
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("%02d:%02d", m, s)
}

// barChars are tqdm's UTF bar characters: blank, ⅛ to ⅞, full.
var barChars = []rune(" ▏▎▍▌▋▊▉█")

// bar is tqdm's Bar of frac (in [0, 1]) over width cells.
func bar(frac float64, width int, blank bool) string {
	if blank {
		return strings.Repeat(" ", width)
	}
	nsyms := len(barChars) - 1
	cells := int(frac * float64(width) * float64(nsyms))
	full, part := cells/nsyms, cells%nsyms
	s := strings.Repeat(string(barChars[nsyms]), full)
	if full < width {
		s += string(barChars[part]) + strings.Repeat(" ", width-full-1)
	}
	return s
}

// Meter is one bar line: desc, n of total batches (total <= 0: unknown),
// elapsed seconds, the postfix items, fitted to ncols columns (0: no limit,
// a bar of 10 cells) as tqdm does: the bar takes what the text leaves, at
// least one cell, and a line still too long is cut at ncols.
func Meter(desc string, n, total int, elapsed float64, postfix []Item, ncols int) string {
	var rate float64
	if elapsed > 0 {
		rate = float64(n) / elapsed
	}
	rateFmt := "?it/s"
	if rate != 0 {
		rateFmt = fmt.Sprintf("%5.2fit/s", rate)
	}
	remaining := "?"
	if rate != 0 {
		left := 0.0
		if total > 0 {
			left = float64(total-n) / rate
		}
		remaining = Interval(left)
	}
	var post strings.Builder
	for _, it := range postfix {
		fmt.Fprintf(&post, ", %s=%s", it.Name, it.Value)
	}
	lbar := ""
	if desc != "" {
		lbar = desc + ": "
	}
	totalFmt := "?"
	frac := 0.0
	if total > 0 {
		totalFmt = strconv.Itoa(total)
		frac = min(max(float64(n)/float64(total), 0), 1)
		lbar += fmt.Sprintf("%3.0f%%|", pyRound(frac*100))
	} else {
		lbar += "|"
	}
	rbar := fmt.Sprintf("| %d/%s [%s<%s, %s%s]", n, totalFmt, Interval(elapsed), remaining, rateFmt, post.String())
	width := 10
	if ncols > 0 {
		width = max(1, ncols-utf8.RuneCountInString(lbar)-utf8.RuneCountInString(rbar))
	}
	line := lbar + bar(frac, width, total <= 0) + rbar
	if ncols > 0 && utf8.RuneCountInString(line) > ncols {
		line = string([]rune(line)[:ncols])
	}
	return line
}

// pyRound rounds half to even, as Python's '{:3.0f}' does.
func pyRound(x float64) float64 { return math.RoundToEven(x) }
