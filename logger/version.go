package logger

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// versionPrefix starts every numbered version directory name.
const versionPrefix = "version_"

// versionDirName returns the directory name of numbered version v.
func versionDirName(v int) string {
	return versionPrefix + strconv.Itoa(v)
}

// nextVersion returns one more than the largest version_N directory in root,
// or 0 when root does not exist or holds none. Entries that are not
// directories or whose suffix is not a non-negative integer are ignored.
func nextVersion(root string) (int, error) {
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("logger: scan %s for existing versions: %w", root, err)
	}
	next := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		n, ok := parseVersionDir(e.Name())
		if ok && n+1 > next {
			next = n + 1
		}
	}
	return next, nil
}

// parseVersionDir extracts N from a directory named version_N, where N is
// all decimal digits.
func parseVersionDir(name string) (int, bool) {
	digits, ok := strings.CutPrefix(name, versionPrefix)
	if !ok || digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		return 0, false
	}
	return n, true
}
