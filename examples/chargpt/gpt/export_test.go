package gpt

// UseGoMLXAttention makes the model use GoMLX's MultiHeadAttention (on) or
// causalSelfAttention (off) for the graphs built until restore is called.
func UseGoMLXAttention(on bool) (restore func()) {
	old := gomlxAttention
	gomlxAttention = on
	return func() { gomlxAttention = old }
}

// UseMaskedSoftmax makes causalSelfAttention use GoMLX's MaskedSoftmax (on)
// or causalSoftmax (off) for the graphs built until restore is called.
func UseMaskedSoftmax(on bool) (restore func()) {
	old := maskedSoftmax
	maskedSoftmax = on
	return func() { maskedSoftmax = old }
}
