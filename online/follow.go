package online

import (
	"context"
	"errors"
	"io"
	"os"
	"time"
)

// FollowOptions tune Follow.
type FollowOptions struct {
	// Every is the least time between two checks (default 1s): a check
	// starts once it has passed and a transaction came since the last.
	Every time.Duration
	// Poll is how often a growing file that reached its end is read
	// again (default 100ms).
	Poll time.Duration
	// Tail follows r as a growing file: its end is where the writer has
	// got to, and reading goes on until the stream is whole
	// (Checker.Waits). Otherwise the end of r is the end of the stream.
	Tail bool
	// OnCheck, when set, is called after each check with its state; it
	// returns false to stop following (fail fast). Follow then returns
	// that state, not final.
	OnCheck func(Status) bool
}

// IsTail says whether r is a regular file, which Follow follows as one
// being appended to (FollowOptions.Tail).
func IsTail(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode().IsRegular()
}

// Follow reads r into c until the stream ends, checking at intervals,
// and returns the final state (Checker.Finish). A cancelled ctx stops
// reading; the state is then that of the last check, with the context's
// error.
func Follow(ctx context.Context, r io.Reader, c *Checker, opt FollowOptions) (Status, error) {
	if opt.Every <= 0 {
		opt.Every = time.Second
	}
	if opt.Poll <= 0 {
		opt.Poll = 100 * time.Millisecond
	}
	done := make(chan error, 1)
	readCtx, stopReading := context.WithCancel(ctx)
	defer stopReading()
	go func() { done <- pump(readCtx, r, c, opt) }()
	tick := time.NewTicker(opt.Every)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if ctx.Err() != nil {
				return c.Status(), ctx.Err()
			}
			if err != nil && !errors.Is(err, context.Canceled) {
				return c.Status(), err
			}
			st, ferr := c.Finish(context.WithoutCancel(ctx))
			if ferr != nil {
				return st, ferr
			}
			if opt.OnCheck != nil {
				opt.OnCheck(st)
			}
			return st, nil
		case <-tick.C:
			st, err := c.Check(ctx)
			if err != nil {
				return st, err
			}
			if opt.OnCheck != nil && !opt.OnCheck(st) {
				return st, nil
			}
		}
	}
}

// pump copies r into c: to its end, or, for a growing file, until the
// stream is whole.
func pump(ctx context.Context, r io.Reader, c *Checker, opt FollowOptions) error {
	buf := make([]byte, 256<<10)
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		n, err := r.Read(buf)
		if n > 0 {
			c.Write(buf[:n])
		}
		switch {
		case err == io.EOF && opt.Tail && c.Waits():
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(opt.Poll):
			}
		case err == io.EOF:
			return nil
		case err != nil:
			return err
		}
	}
}
