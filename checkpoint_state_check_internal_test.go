package volt

import "testing"

func TestCompareVersions(t *testing.T) {
	tests := []struct {
		a, b string
		want int
		ok   bool
	}{
		{"0.1.0", "0.1.0", 0, true},
		{"0.2.0", "0.1.0", 1, true},
		{"0.1.0", "0.1.1", -1, true},
		{"1.0.0", "0.99.99", 1, true},
		{"v0.1.0", "0.1.0", 0, true},
		{"0.2.0-dev", "0.2.0", -1, true},
		{"0.2.0-dev", "0.1.0", 1, true},
		{"0.1.0+abc", "0.1.0", 0, true},
		{"0.1", "0.1.0", 0, false},
		{"", "0.1.0", 0, false},
		{"x.y.z", "0.1.0", 0, false},
	}
	for _, tc := range tests {
		got, ok := compareVersions(tc.a, tc.b)
		if got != tc.want || ok != tc.ok {
			t.Errorf("compareVersions(%q, %q) = %d, %v; want %d, %v", tc.a, tc.b, got, ok, tc.want, tc.ok)
		}
	}
}
