package volt

import (
	"strings"
	"testing"
)

// TestSummaryPaths: GoMLX's layer scopes fold into the user's scope when
// they are its only child, never into a name two variables share, and the
// row takes the layer's type.
func TestSummaryPaths(t *testing.T) {
	tests := []struct {
		name  string
		paths []string
		want  []string // "shown/path types" per variable
	}{
		{"dense at the root keeps its name", []string{"dense/weights", "dense/biases"},
			[]string{"dense/weights Dense,Variable", "dense/biases Dense,Variable"}},
		{"a layer in the user's scope is that scope", []string{"hidden_0/dense/weights", "hidden_0/dense/biases", "out/dense/weights"},
			[]string{"hidden_0/weights Dense,Variable", "hidden_0/biases Dense,Variable", "out/weights Dense,Variable"}},
		{"user scope named as the layer", []string{"dense/dense/weights"}, []string{"dense/weights Dense,Variable"}},
		{"two layers in one scope stay apart", []string{"block/dense/weights", "block/layer_normalization/gain"},
			[]string{"block/dense/weights ,Dense,Variable", "block/layer_normalization/gain ,LayerNorm,Variable"}},
		{"embedding table", []string{"tokens/embeddings"}, []string{"tokens/embeddings Embedding,Variable"}},
		{"nested layers", []string{"enc/attn/MultiHeadAttention/key/dense/weights"},
			[]string{"enc/attn/key/weights ,MultiHeadAttention,Dense,Variable"}},
		{"plain variable", []string{"stats/scale"}, []string{"stats/scale ,Variable"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var paths [][]string
			for _, p := range tc.paths {
				paths = append(paths, strings.Split(p, "/"))
			}
			var got []string
			for _, sp := range summaryPaths(paths) {
				got = append(got, strings.Join(sp.parts, "/")+" "+strings.Join(sp.types, ","))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestIsBuffer: batch normalization's running statistics are PyTorch
// buffers, not parameters (Lightning counts them nowhere); weights, frozen
// or not, are parameters.
func TestIsBuffer(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{"/stem/bn/running_mean", true},
		{"/stem/bn/running_var", true},
		{"/stem/bn/num_batches_tracked", true},
		{"/stem/bn/weight", false},
		{"/stem/bn/bias", false},
		{"/block/batch_normalization/mean", true},
		{"/block/batch_normalization/variance", true},
		{"/block/batch_normalization/avg_weight", true},
		{"/block/batch_normalization/scale", false},
		{"/stats/mean", false}, // a user's variable named mean outside a GoMLX BatchNorm
		{"/hidden_0/dense/weights", false},
	}
	for _, tc := range tests {
		if got := isRunningStatistic(tc.path); got != tc.want {
			t.Errorf("isRunningStatistic(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}
