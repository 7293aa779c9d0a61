package history

import "fmt"

// InputError is a reader's error: the file, the position in it, and what was
// wrong or expected. Every reader returns its structural errors as
// *InputError so that the CLI can report them uniformly (exit status 2).
type InputError struct {
	Pos Pos
	Msg string
}

func (e *InputError) Error() string { return e.Pos.String() + ": " + e.Msg }

// Errorf builds an *InputError at pos.
func Errorf(pos Pos, format string, args ...any) *InputError {
	return &InputError{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}
