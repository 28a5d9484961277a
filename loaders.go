package volt

import (
	"errors"
	"fmt"

	"github.com/voltml/volt/data"
)

// validator is implemented by loaders that can check their configuration
// (data.DataLoader does).
type validator interface{ Validate() error }

// checkLoaders validates each loader that can validate itself, naming it by
// role and index, and rejects nil loaders.
func checkLoaders(role string, loaders []data.Loader) error {
	var errs []error
	for i, l := range loaders {
		name := role
		if len(loaders) > 1 {
			name = fmt.Sprintf("%s[%d]", role, i)
		}
		if l == nil {
			errs = append(errs, fmt.Errorf("%s loader is nil", name))
			continue
		}
		if v, ok := l.(validator); ok {
			if err := v.Validate(); err != nil {
				errs = append(errs, fmt.Errorf("%s loader: %w", name, err))
			}
		}
	}
	return errors.Join(errs...)
}
