package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// The stage display is for terminals only: a buffer, a pipe or a file gets
// nothing, and a nil display takes every call.
func TestStageDisplayOnlyOnTerminals(t *testing.T) {
	require.Nil(t, newStageDisplay(&bytes.Buffer{}))
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	require.Nil(t, newStageDisplay(w))
	var d *stageDisplay
	d.set("solve")
	d.finish()
}
