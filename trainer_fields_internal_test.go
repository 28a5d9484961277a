package volt

import (
	"reflect"
	"testing"
)

// The Trainer stays a small central object (issue 41: it had grown back to
// 17 fields): what belongs to one concern lives in that concern's struct
// (moduleKept, logging, checkpointState, run…).
func TestTrainerHasAtMost15Fields(t *testing.T) {
	if n := reflect.TypeFor[Trainer]().NumField(); n > 15 {
		t.Errorf("Trainer has %d fields; keep it at 15 or fewer by giving a concern's fields a struct of their own", n)
	}
}
