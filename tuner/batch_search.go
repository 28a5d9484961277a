package tuner

// Batch-size search modes for BatchSizeOptions.Mode.
const (
	// Power doubles the batch size until a trial fails (Lightning's "power").
	Power = "power"
	// BinSearch doubles until a trial fails, then bisects between the last
	// size that fit and the first that did not (Lightning's "binsearch").
	BinSearch = "binsearch"
)

// trialFunc runs a trial at a batch size and reports whether it fit (an error
// is a failure of another kind, which ends the search).
type trialFunc func(size int) (fits bool, err error)

// searchBatchSize is Lightning 2.2.5's _run_power_scaling and
// _run_binary_scaling: it returns the chosen size and the sizes tried, in
// order. covers(size) reports whether one batch of size holds the whole
// dataset (Lightning's "batch size is greater or equal than the length of your
// dataset", which stops the growth). Like Lightning, the result of a power
// search that runs out of trials is the next, untried size.
func searchBatchSize(mode string, size, maxTrials int, covers func(int) bool, try trialFunc) (int, []int, error) {
	var tried []int
	// adjust is _adjust_batch_size: the new size, unless size covers the data.
	adjust := func(size, next int) (int, bool) {
		if covers(size) {
			return size, false
		}
		return next, next != size
	}
	if mode == Power {
		anySuccess := false
		for range maxTrials {
			tried = append(tried, size)
			fits, err := try(size)
			if err != nil {
				return 0, tried, err
			}
			if fits {
				next, changed := adjust(size, size*2)
				size = next
				if !changed {
					break
				}
				anySuccess = true
				continue
			}
			size, _ = adjust(size, size/2)
			if anySuccess {
				break
			}
		}
		return size, tried, nil
	}
	low, high, count := 1, 0, 0
	for {
		tried = append(tried, size)
		fits, err := try(size)
		if err != nil {
			return 0, tried, err
		}
		if fits {
			count++
			if count > maxTrials {
				break
			}
			low = size
			var next int
			if high > 0 {
				if high-low <= 1 {
					break
				}
				next = (high + low) / 2
			} else {
				next = size * 2
			}
			var changed bool
			if size, changed = adjust(size, next); !changed {
				break
			}
			continue
		}
		high = size
		size, _ = adjust(size, (high+low)/2)
		if high-low <= 1 {
			break
		}
	}
	return size, tried, nil
}
