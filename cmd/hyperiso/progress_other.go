//go:build !linux

package main

// processBytesRead is not known here: reading shows the spinner.
func processBytesRead() (int64, bool) { return 0, false }
