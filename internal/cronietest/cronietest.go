// Package cronietest runs a crontab job line's command part the way cronie
// does, as an oracle for tests of code that reads or rewrites crontabs. It
// is written apart from package crontab on purpose.
package cronietest

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Split splits a job line's command part as cronie's do_command.c does:
// the command is everything up to the first unescaped %, with each \% made
// a %; the rest is its standard input, with each unescaped % a newline and
// each \% a %.
func Split(part string) (command, input string) {
	var cmd, in strings.Builder
	escaped, inInput := false, false
	for _, c := range []byte(part) {
		if !inInput {
			switch {
			case escaped:
				if c != '%' {
					cmd.WriteByte('\\')
				}
				cmd.WriteByte(c)
				escaped = false
			case c == '\\':
				escaped = true
			case c == '%':
				inInput = true
			default:
				cmd.WriteByte(c)
			}
			continue
		}
		if escaped {
			if c != '%' {
				in.WriteByte('\\')
			}
		} else if c == '%' {
			c = '\n'
		}
		escaped = c == '\\'
		if !escaped {
			in.WriteByte(c)
		}
	}
	if escaped {
		if inInput {
			in.WriteByte('\\')
		} else {
			cmd.WriteByte('\\')
		}
	}
	return cmd.String(), in.String()
}

// Run runs part as cron would, through shell -c with the environment plus
// env, and returns its standard output; a failure fails the test with what
// it printed on standard error.
func Run(t testing.TB, shell, part string, env ...string) string {
	t.Helper()
	command, input := Split(part)
	run := exec.Command(shell, "-c", command)
	run.Stdin = strings.NewReader(input)
	run.Env = append(os.Environ(), env...)
	out, err := run.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("%s: %v: %s", command, err, exit.Stderr)
		}
		t.Fatalf("%s: %v", command, err)
	}
	return string(out)
}
