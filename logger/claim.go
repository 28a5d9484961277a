package logger

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// maxClaimTries bounds how many taken version numbers Claim steps over
// before it gives up (only a root filling up as fast as Claim scans it
// reaches it).
const maxClaimTries = 1000

// claimKey names a version chosen by Pin: the experiment root and the
// number Pin chose there.
type claimKey struct {
	root   string
	chosen int
}

// claims holds the directories this process claimed, by the version its
// loggers chose, so that loggers of one program that chose the same next
// free version share the directory the first of them claimed.
var claims = struct {
	sync.Mutex
	dirs map[claimKey]int
}{dirs: map[claimKey]int{}}

// Claim creates d's directory and returns d fixed to it. When Pin chose
// d's version (neither Version nor VersionName was given) the directory is
// claimed atomically: if version_N exists already — another program took
// it since Pin looked — Claim moves on to the next free number, so that
// programs started at once on one root never share a directory. Loggers of
// one process that were pinned to the same version share the directory the
// first of them claimed. A given Version or VersionName is used as it is
// (created when missing, shared when it exists).
func (d VersionDir) Claim() (VersionDir, error) {
	if !d.chosen {
		if err := os.MkdirAll(d.Path(), 0o755); err != nil {
			return d, fmt.Errorf("logger: create log directory %s: %w", d.Path(), err)
		}
		return d, nil
	}
	root := filepath.Join(d.SaveDir, d.Name)
	abs, err := filepath.Abs(root)
	if err != nil {
		return d, fmt.Errorf("logger: claim a version directory in %s: %w", root, err)
	}
	key := claimKey{root: abs, chosen: d.Number()}
	claims.Lock()
	defer claims.Unlock()
	if n, ok := claims.dirs[key]; ok {
		d = d.fixed(n)
		if err := os.MkdirAll(d.Path(), 0o755); err != nil {
			return d, fmt.Errorf("logger: create log directory %s: %w", d.Path(), err)
		}
		return d, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return d, fmt.Errorf("logger: create log directory %s: %w", root, err)
	}
	n := key.chosen
	for range maxClaimTries {
		err := os.Mkdir(filepath.Join(root, versionDirName(n)), 0o755)
		if err == nil {
			claims.dirs[key] = n
			return d.fixed(n), nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return d, fmt.Errorf("logger: create log directory %s: %w", filepath.Join(root, versionDirName(n)), err)
		}
		next, err := nextVersion(root)
		if err != nil {
			return d, err
		}
		n = max(n+1, next)
	}
	return d, fmt.Errorf("logger: claim a version directory in %s: %d versions were taken while trying; set Version or VersionName", root, maxClaimTries)
}

// fixed returns d set to version n, no longer a chosen one.
func (d VersionDir) fixed(n int) VersionDir {
	d.Version, d.chosen = &n, false
	return d
}

// MayResume reports whether a logger pinned to d may continue, instead, the
// run logged in directory dir (see [Resumable]): d is dir, or Pin chose d's
// version as the next free one of dir's experiment root.
func (d VersionDir) MayResume(dir string) bool {
	if sameDir(d.Path(), dir) {
		return true
	}
	return d.chosen && sameDir(filepath.Join(d.SaveDir, d.Name), filepath.Dir(filepath.Clean(dir)))
}

// sameDir reports whether a and b name the same directory path (compared
// as absolute, cleaned paths).
func sameDir(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}

// VersionDirAt returns the VersionDir whose Path is dir, with a given
// Version when dir is named version_N, else a VersionName.
func VersionDirAt(dir string) VersionDir {
	dir = filepath.Clean(dir)
	parent := filepath.Dir(dir)
	d := VersionDir{SaveDir: filepath.Dir(parent), Name: filepath.Base(parent)}
	if n, ok := parseVersionDir(filepath.Base(dir)); ok && versionDirName(n) == filepath.Base(dir) {
		d.Version = &n
	} else {
		d.VersionName = filepath.Base(dir)
	}
	return d
}
