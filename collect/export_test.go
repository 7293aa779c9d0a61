package collect

import "os"

// NewFileRecorderForTest is a Recorder to dest through f (for the tests
// of package collect_test that inject write failures).
func NewFileRecorderForTest(dest, tmp string, f interface {
	Write([]byte) (int, error)
	WriteAt([]byte, int64) (int, error)
	Sync() error
	Truncate(int64) error
	Close() error
}) *Recorder {
	return newFileRecorder(dest, tmp, f)
}

var _ file = (*os.File)(nil)

// ReasonText is reasonText, for the tests.
var ReasonText = reasonText
