package main

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// stageDelay is how long a command runs before its stage is shown: a check
// that ends sooner leaves the terminal as it was.
const stageDelay = 500 * time.Millisecond

// stageDisplay shows, while a command runs, the stage it is in (read,
// validate, build, prune, encode, solve, saturate, explain) and the time
// elapsed, as a spinner on standard error when that is a terminal; it is
// silent otherwise, so that pipes and CI logs get only the report. The
// stages report no counts of their own yet, hence a spinner, not a bar.
type stageDisplay struct {
	mu    sync.Mutex
	bar   *progressbar.ProgressBar
	stage string
	stop  chan struct{}
	done  sync.WaitGroup
	once  sync.Once
}

// newStageDisplay returns the display for w, or nil when w is not a
// terminal.
func newStageDisplay(w io.Writer) *stageDisplay {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	d := &stageDisplay{stop: make(chan struct{})}
	d.bar = progressbar.NewOptions(-1,
		progressbar.OptionSetWriter(f),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetRenderBlankState(false),
	)
	d.done.Add(1)
	go d.spin()
	return d
}

// spin redraws the spinner until finish, from stageDelay on.
func (d *stageDisplay) spin() {
	defer d.done.Done()
	select {
	case <-d.stop:
		return
	case <-time.After(stageDelay):
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		d.mu.Lock()
		d.bar.Describe(d.stage)
		_ = d.bar.Add(1)
		d.mu.Unlock()
		select {
		case <-d.stop:
			return
		case <-tick.C:
		}
	}
}

// set names the current stage; nil-safe.
func (d *stageDisplay) set(stage string) {
	if d == nil {
		return
	}
	d.mu.Lock()
	d.stage = stage
	d.mu.Unlock()
}

// finish clears the display before the command prints its report; later
// calls do nothing; nil-safe.
func (d *stageDisplay) finish() {
	if d == nil {
		return
	}
	d.once.Do(func() {
		close(d.stop)
		d.done.Wait()
		_ = d.bar.Clear()
	})
}
