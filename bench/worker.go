package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats"
	"github.com/hyperiso/hyperiso/history"
)

// Job is what the parent asks a worker to run: one check of one history.
type Job struct {
	Path         string `json:"path"`
	Format       string `json:"format,omitempty"`
	CobraFlavour string `json:"cobra_flavour,omitempty"`
	Lenient      bool   `json:"lenient,omitempty"`
	Level        string `json:"level"`
	Strategy     string `json:"strategy"`
	// TimeoutMS bounds reading and checking (0: none).
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
}

// Reply is the worker's answer.
type Reply struct {
	// Verdict is satisfied, violated, unknown, timeout or error.
	Verdict      string             `json:"verdict"`
	Reason       string             `json:"reason,omitempty"`
	Error        string             `json:"error,omitempty"`
	Stage        string             `json:"stage,omitempty"`
	CheckMS      float64            `json:"check_ms"`
	TimingsMS    map[string]float64 `json:"timings_ms,omitempty"`
	Counters     map[string]int64   `json:"counters,omitempty"`
	Transactions int                `json:"transactions,omitempty"`
}

// ServeWorker is the child's side of a run: it reads one Job as JSON from
// in, runs it in this process and writes one Reply as JSON to out. A failed
// check is a Reply with verdict error; the returned error is only about
// reading the job or writing the reply. "hyperiso bench --worker" calls it.
func ServeWorker(ctx context.Context, in io.Reader, out io.Writer) error {
	var job Job
	dec := json.NewDecoder(in)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&job); err != nil {
		return fmt.Errorf("bench worker: reading the job from standard input: %w", err)
	}
	return json.NewEncoder(out).Encode(RunJob(ctx, job))
}

// RunJob runs job in this process.
func RunJob(ctx context.Context, job Job) Reply {
	lv, ok := history.ParseLevel(job.Level)
	if !ok {
		return Reply{Verdict: VerdictError, Error: fmt.Sprintf("unknown level %q", job.Level)}
	}
	timeout := time.Duration(job.TimeoutMS) * time.Millisecond
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	start := time.Now()
	h, err := formats.Read(job.Path, formats.Options{Format: job.Format, CobraFlavour: job.CobraFlavour, Lenient: job.Lenient})
	if err != nil {
		return Reply{Verdict: VerdictError, Error: err.Error(), CheckMS: msSince(start)}
	}
	readMS := msSince(start)
	if ctx.Err() != nil {
		return Reply{Verdict: VerdictTimeout, Stage: "read", Reason: fmt.Sprintf("timeout after %s during read", timeout),
			CheckMS: readMS, TimingsMS: map[string]float64{"read": readMS}, Transactions: h.Stats().Transactions}
	}
	res, err := check.Check(ctx, h, lv, check.Options{Strategy: job.Strategy})
	rep := Reply{CheckMS: msSince(start)}
	if res == nil {
		rep.Transactions = h.Stats().Transactions
	} else {
		rep.Verdict, rep.Reason, rep.Stage = res.Verdict.String(), res.Reason, res.Stage
		rep.TimingsMS, rep.Counters = res.TimingsMS, res.Counters
		rep.Transactions = res.History.Transactions
	}
	if rep.TimingsMS == nil {
		rep.TimingsMS = map[string]float64{}
	}
	rep.TimingsMS["read"] = readMS
	switch {
	case errors.Is(err, context.DeadlineExceeded),
		err == nil && rep.Verdict == check.Unknown.String() && errors.Is(ctx.Err(), context.DeadlineExceeded):
		rep.Verdict = VerdictTimeout
		rep.Reason = fmt.Sprintf("timeout after %s during %s", timeout, rep.Stage)
	case err != nil:
		rep.Verdict, rep.Error, rep.Stage = VerdictError, err.Error(), ""
	default:
		rep.Stage = ""
	}
	return rep
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }

// maxStderr bounds the child's standard error kept for error messages.
const maxStderr = 4096

// runChild runs job in a worker process and measures it.
func runChild(ctx context.Context, cfg Config, job Job) Sample {
	in, err := json.Marshal(job)
	if err != nil {
		return Sample{Verdict: VerdictError, Error: err.Error()}
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(cctx, cfg.Command[0], cfg.Command[1:]...)
	cmd.Env = append(cmd.Environ(), cfg.Env...)
	cmd.Stdin = bytes.NewReader(in)
	var stdout bytes.Buffer
	stderr := &tailBuffer{max: maxStderr}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	// Do not wait forever for pipes that a grandchild may still hold.
	cmd.WaitDelay = 2 * time.Second

	cmd.SysProcAttr = workerAttr()
	// The worker's death signal fires when the thread that started it
	// ends: keep this goroutine on that thread until the worker is gone.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Sample{Verdict: VerdictError, Error: fmt.Sprintf("starting the worker %s: %v", cfg.Command[0], err)}
	}
	var timer *time.Timer
	if cfg.Timeout > 0 {
		timer = time.AfterFunc(cfg.Timeout+cfg.KillGrace, cancel)
	}
	werr := cmd.Wait()
	s := Sample{WallMS: msSince(start)}
	killed := timer != nil && !timer.Stop()
	if ps := cmd.ProcessState; ps != nil {
		s.MaxRSS, s.UserMS, s.SysMS = usage(ps)
	}
	var rep Reply
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || rep.Verdict == "" {
		// No reply: the child was killed, cancelled or failed.
		switch {
		case killed:
			s.Verdict, s.Killed = VerdictTimeout, true
			s.Reason = fmt.Sprintf("timeout after %s (killed %s later)", cfg.Timeout, cfg.KillGrace)
		case ctx.Err() != nil:
			s.Verdict, s.Error = VerdictError, "cancelled: "+ctx.Err().Error()
		default:
			msg := strings.TrimSpace(stderr.String())
			if werr != nil {
				msg = strings.TrimSpace(werr.Error() + ": " + msg)
			}
			if msg == "" {
				msg = fmt.Sprintf("the worker wrote no reply (%q)", truncate(stdout.String(), 200))
			}
			s.Verdict, s.Error = VerdictError, msg
		}
		return s
	}
	s.Verdict, s.Reason, s.Error, s.Stage = rep.Verdict, rep.Reason, rep.Error, rep.Stage
	s.CheckMS, s.TimingsMS, s.Counters, s.Transactions = rep.CheckMS, rep.TimingsMS, rep.Counters, rep.Transactions
	return s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }
