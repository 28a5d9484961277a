package main

import "testing"

func TestHumanBytes(t *testing.T) {
	tests := []struct {
		in   int64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{1536, "1.5 KiB"},
		{5 << 20, "5.0 MiB"},
		{3 << 30, "3.0 GiB"},
		{2048 << 30, "2.0 TiB"},
		{1 << 52, "4096.0 TiB"},
	}
	for _, tt := range tests {
		if got := humanBytes(tt.in); got != tt.want {
			t.Errorf("humanBytes(%d) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestShapeString(t *testing.T) {
	tests := []struct {
		in   []int
		want string
	}{
		{nil, "[]"},
		{[]int{7}, "[7]"},
		{[]int{2, 0, 3}, "[2, 0, 3]"},
	}
	for _, tt := range tests {
		if got := shapeString(tt.in); got != tt.want {
			t.Errorf("shapeString(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
