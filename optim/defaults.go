package optim

// orDefault returns v, or def when v is the zero value: a configuration field
// whose zero value means PyTorch's default.
func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// orDefaultOrNone returns def when v is 0, 0 when v is negative and v
// otherwise: a field whose zero value means PyTorch's (non-zero) default
// while a literal zero is still meaningful, spelled as any negative value
// (as net.Dialer.KeepAlive spells "none").
func orDefaultOrNone[T int | float64](v, def T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}
