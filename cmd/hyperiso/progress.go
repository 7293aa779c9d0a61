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
// elapsed on standard error when that is a terminal; it is silent
// otherwise, so that pipes and CI logs get only the report. Reading a
// history of known size (a file, a directory of logs, standard input
// redirected from a file) draws a bar of the bytes read so far, as the
// kernel counts what the process has read (bytesRead); the other stages,
// which report no counts of their own, draw a spinner.
type stageDisplay struct {
	mu    sync.Mutex
	w     io.Writer
	bar   *progressbar.ProgressBar // the spinner
	stage string
	// The read bar, while stage "read" runs on an input of known size,
	// of which the process had read readBase bytes before.
	readBar  *progressbar.ProgressBar
	readBase int64
	// bytesRead returns what the process has read so far (ok false:
	// unknown on this system).
	bytesRead func() (int64, bool)
	delay     time.Duration
	stop      chan struct{}
	done      sync.WaitGroup
	once      sync.Once
}

// newStageDisplay returns the display for w, or nil when w is not a
// terminal.
func newStageDisplay(w io.Writer) *stageDisplay {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return startStageDisplay(f, processBytesRead, stageDelay)
}

// startStageDisplay draws on w, whatever it is, from delay on.
func startStageDisplay(w io.Writer, bytesRead func() (int64, bool), delay time.Duration) *stageDisplay {
	d := &stageDisplay{w: w, bytesRead: bytesRead, delay: delay, stop: make(chan struct{})}
	d.bar = progressbar.NewOptions(-1,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSpinnerType(14),
		// spin turns it; the library's own turning goroutine reads the
		// bar's state unlocked (a data race).
		progressbar.OptionSetSpinnerChangeInterval(0),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetRenderBlankState(false),
	)
	d.done.Add(1)
	go d.spin()
	return d
}

// spin redraws the display until finish, from delay on.
func (d *stageDisplay) spin() {
	defer d.done.Done()
	select {
	case <-d.stop:
		return
	case <-time.After(d.delay):
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		d.mu.Lock()
		d.draw()
		d.mu.Unlock()
		select {
		case <-d.stop:
			return
		case <-tick.C:
		}
	}
}

// draw shows the read bar while a history of known size is read, the
// spinner otherwise; d.mu is held.
func (d *stageDisplay) draw() {
	if d.stage == "read" && d.readBar != nil {
		if n, ok := d.bytesRead(); ok {
			// What else the process reads (a few bytes of /proc) may
			// push the count past the size: the bar stops at full.
			_ = d.readBar.Set64(min(max(n-d.readBase, 0), d.readBar.GetMax64()-1))
			return
		}
	}
	d.clearReadBar()
	d.bar.Describe(d.stage)
	_ = d.bar.Add(1)
}

// clearReadBar removes the read bar, if drawn; d.mu is held.
func (d *stageDisplay) clearReadBar() {
	if d.readBar != nil {
		_ = d.readBar.Clear()
		d.readBar = nil
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

// reading enters stage "read" of an input whose size in bytes size tells
// (0: unknown, the spinner is shown); nil-safe, and without a display size
// is not asked, so that a check off a terminal stats nothing more.
func (d *stageDisplay) reading(size func() int64) {
	if d == nil {
		return
	}
	total := size()
	d.mu.Lock()
	d.clearReadBar()
	d.stage = "read"
	d.readBase, _ = d.bytesRead()
	if total > 0 {
		d.readBar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(d.w),
			progressbar.OptionSetDescription("read"),
			progressbar.OptionShowBytes(true),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetRenderBlankState(false),
		)
		// Its rate and time left count from now, not from when it is
		// first drawn.
		d.readBar.StartWithoutRender()
	}
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
		d.clearReadBar()
		_ = d.bar.Clear()
	})
}
