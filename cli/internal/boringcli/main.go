// Command boringcli is the smallest program built on cli.Run: volt's boring
// regression model (internal/testutil) with its data module. The CLI tests
// run it as a user would.
package main

import (
	"github.com/voltml/volt/cli"
	"github.com/voltml/volt/internal/testutil"
)

func main() {
	cli.Main(newModel, testutil.NewBoringDataModule)
}

// newModel returns the model with its default learning rate.
func newModel() *testutil.Boring { return &testutil.Boring{LR: 0.05} }
