package cli

import "strings"

// nearest returns the candidate closest to s: the one with the smallest edit
// distance once case, '-' and '_' are ignored ("" when there are none). A
// candidate whose last dotted segment equals s's wins outright, so that a
// key put in the wrong section ("max_epochs" at the top) finds its place.
func nearest(s string, candidates []string) string {
	last := s[strings.LastIndexByte(s, '.')+1:]
	for _, c := range candidates {
		if c != s && c[strings.LastIndexByte(c, '.')+1:] == last {
			return c
		}
	}
	best, bestD := "", -1
	ns := normalizeName(s)
	for _, c := range candidates {
		if d := editDistance(ns, normalizeName(c)); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// normalizeName lowercases s and drops '-' and '_'.
func normalizeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' {
			return -1
		}
		return r
	}, strings.ToLower(s))
}

// editDistance is the Levenshtein distance between a and b (bytes).
// Written here rather than imported: twenty lines do not justify a
// dependency.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// lightningKeys maps LightningCLI trainer keys that volt spells otherwise
// to volt's spelling, for the "did you mean" of an unknown key.
var lightningKeys = map[string]string{
	"trainer.enable_checkpointing": "trainer.disable_checkpointing (inverted; checkpointing is on by default)",
	"trainer.enable_model_summary": "trainer.disable_model_summary (inverted; the summary is on by default)",
	"trainer.logger":               "trainer.loggers (a list by name) or trainer.disable_loggers",
	"trainer.gpus":                 "trainer.accelerator=gpu with trainer.devices (or trainer.device_ids)",
	"trainer.strategy":             "trainer.devices (data-parallel over MPI, Lightning's ddp)",
	"trainer.max_time":             "trainer.callbacks=[{timer: {max_time: \"DD:HH:MM:SS\"}}]",
}

// suggestKey returns what to suggest for unknown key: volt's spelling of a
// LightningCLI key, else the nearest candidate.
func suggestKey(key string, candidates []string) string {
	if s, ok := lightningKeys[strings.ReplaceAll(key, "-", "_")]; ok {
		return s
	}
	return nearest(key, candidates)
}
