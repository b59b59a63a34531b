// Package oracle runs systemd-analyze calendar, the reference for package
// oncalendar: the vector generator and the differential test both ask it.
package oracle

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Result is what systemd-analyze says of one expression.
type Result struct {
	Expr       string
	Normalized string // "" when systemd got stuck before printing it
	// Next holds the elapses after the base time, each strictly after the
	// one before, in Unix seconds; fewer than asked when it elapses no more.
	Next []int64
	// Stuck reports that systemd gave up searching after the last of Next.
	Stuck bool `json:",omitempty"`
}

// Available reports whether systemd-analyze can be run.
func Available() bool {
	_, err := exec.LookPath("systemd-analyze")
	return err == nil
}

// Calendar runs systemd-analyze calendar for exprs, which must all parse,
// with TZ=tz, from base, for n iterations each.
func Calendar(ctx context.Context, tz string, base int64, n int, exprs []string) ([]Result, error) {
	res, err := calendar(ctx, tz, base, n, exprs)
	if err == nil || len(exprs) == 1 {
		return res, err
	}
	// One expression stopped the run: ask for each alone.
	res = res[:0]
	for _, e := range exprs {
		one, err := calendar(ctx, tz, base, n, []string{e})
		if err != nil {
			return nil, err
		}
		res = append(res, one...)
	}
	return res, nil
}

func calendar(ctx context.Context, tz string, base int64, n int, exprs []string) ([]Result, error) {
	res, stuck, err := run(ctx, tz, base, n, exprs)
	if err != nil {
		return nil, err
	}
	if stuck {
		// Nothing is printed then: find how far it got, by bisection over
		// the number of iterations (one that gets stuck at k gets stuck at
		// every number past k).
		res = []Result{{Expr: exprs[0], Stuck: true}}
		lo, hi := 0, n // lo iterations succeed (0: trivially), hi get stuck
		var last []Result
		for hi-lo > 1 {
			mid := lo + (hi-lo)/2
			part, stuck, err := run(ctx, tz, base, mid, exprs)
			if err != nil {
				return nil, err
			}
			if stuck {
				hi = mid
			} else {
				lo, last = mid, part
			}
		}
		if last != nil {
			res[0].Next, res[0].Normalized = last[0].Next, last[0].Normalized
		}
	}
	for i := range exprs {
		if i >= len(res) || res[i].Expr != exprs[i] {
			return nil, fmt.Errorf("systemd-analyze answered for %d of %d expressions; not as asked for %q", len(res), len(exprs), exprs[i])
		}
	}
	return res, nil
}

// run runs systemd-analyze calendar once. stuck reports that it gave up,
// which only a run for one expression may do without an error.
func run(ctx context.Context, tz string, base int64, n int, exprs []string) (res []Result, stuck bool, err error) {
	args := []string{"calendar", fmt.Sprintf("--base-time=@%d", base), fmt.Sprintf("--iterations=%d", n), "--"}
	args = append(args, exprs...)
	cmd := exec.CommandContext(ctx, "systemd-analyze", args...)
	cmd.Env = append(os.Environ(), "TZ="+tz, "LC_ALL=C", "SYSTEMD_COLORS=0", "SYSTEMD_PAGER=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		// systemd gives up on a search of more than 1000 steps ("Infinite
		// loop in calendar calculation"): the timer elapses no more.
		if len(exprs) > 1 || !strings.Contains(stderr.String(), "Failed to determine next elapse") {
			return nil, false, fmt.Errorf("systemd-analyze calendar %q (TZ=%s): %w: %s", exprs, tz, err, strings.TrimSpace(stderr.String()))
		}
		return nil, true, nil
	}
	res, err = parse(out)
	if err != nil {
		return nil, false, fmt.Errorf("read systemd-analyze output (TZ=%s): %w", tz, err)
	}
	return res, false, nil
}

// Parses reports whether systemd-analyze accepts expr (with TZ=tz).
func Parses(ctx context.Context, tz, expr string) (bool, error) {
	cmd := exec.CommandContext(ctx, "systemd-analyze", "calendar", "--", expr)
	cmd.Env = append(os.Environ(), "TZ="+tz, "LC_ALL=C", "SYSTEMD_COLORS=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err == nil {
		return true, nil
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) && strings.Contains(stderr.String(), "Failed to parse calendar specification") {
		return false, nil
	}
	return false, fmt.Errorf("systemd-analyze calendar %q: %w: %s", expr, err, stderr.String())
}

const stamp = "Mon 2006-01-02 15:04:05 MST"

func parse(out []byte) ([]Result, error) {
	var res []Result
	sc := bufio.NewScanner(bytes.NewReader(out))
	var pending string // an elapse line not yet confirmed in UTC
	block := false     // inside an expression's lines
	flush := func() error {
		if pending == "" {
			return nil
		}
		// Printed only in UTC when the local zone is UTC.
		t, err := time.Parse(stamp, pending)
		if err != nil || !strings.HasSuffix(pending, " UTC") {
			return fmt.Errorf("elapse %q has no UTC reading", pending)
		}
		r := &res[len(res)-1]
		r.Next = append(r.Next, t.Unix())
		pending = ""
		return nil
	}
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" { // between expressions
			if err := flush(); err != nil {
				return nil, err
			}
			block = false
			continue
		}
		key, val, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		switch {
		case key == "Original form" || key == "Normalized form" && !block:
			// The original form is left out when it is the normalized one.
			res = append(res, Result{Expr: val})
			block = true
			if key == "Normalized form" {
				res[len(res)-1].Normalized = val
			}
		case key == "Normalized form":
			res[len(res)-1].Normalized = val
		case (key == "Next elapse" || strings.HasPrefix(key, "Iter. #")) && len(res) > 0:
			if err := flush(); err != nil {
				return nil, err
			}
			if val != "never" {
				pending = val
			}
		case key == "(in UTC)" && pending != "":
			t, err := time.Parse(stamp, val)
			if err != nil {
				return nil, fmt.Errorf("elapse %q: %w", val, err)
			}
			r := &res[len(res)-1]
			r.Next = append(r.Next, t.Unix())
			pending = ""
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return res, sc.Err()
}
