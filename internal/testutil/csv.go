package testutil

import (
	"encoding/csv"
	"os"
	"strings"
	"testing"
)

// ReadCSV parses the CSV file at path (a logger's metrics.csv), failing t
// when it cannot.
func ReadCSV(t testing.TB, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}

// JoinCSV renders records one per line, for messages comparing two files.
func JoinCSV(recs [][]string) string {
	var b strings.Builder
	for _, r := range recs {
		b.WriteString(strings.Join(r, ",") + "\n")
	}
	return b.String()
}
