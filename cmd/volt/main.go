// Command volt is the volt command-line tool.
//
// Usage:
//
//	volt ckpt inspect FILE   show a checkpoint's metadata, state and tensors
//	volt report DIR...       one HTML page of plots of the runs' metrics
//	volt help                show the usage
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
