// Package crontab reads a crontab as cron (cronie) reads it, and rewrites
// its job lines to run under `vigil run`: the reading and writing of
// `vigil sync crontab`, without any I/O.
//
// # What a line is
//
// As in crontab(5): blank lines and lines whose first non-blank character
// is # are comments; NAME=value is an environment setting (CRON_TZ= sets
// the zone the job lines below it are scheduled in, SHELL= the shell that
// runs them); anything else is a job: five time fields or an @ descriptor
// (@hourly, @daily, ...), in a system crontab (/etc/crontab, /etc/cron.d)
// the user to run as, then the command. @reboot has no schedule to watch.
//
// # The % of a command
//
// cron cuts a job's command at its first % that no backslash escapes: what
// comes before is the command, given to the shell after each \% is made a
// %; what comes after is written to the command's standard input, each
// further unescaped % as a newline. The rewritten line keeps the command
// part inside single quotes, byte for byte, and the input part after them,
// untouched, so cron makes the same command and the same input of it:
// `vigil run` passes its standard input on to the command.
package crontab

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/vigilhq/vigil/monitors"
)

// Kind is what a line of a crontab is.
type Kind string

// Kinds of line.
const (
	Blank   Kind = "blank"
	Comment Kind = "comment"
	Env     Kind = "environment"
	Job     Kind = "job"
	// Reboot is an @reboot job: it runs once at boot, with no schedule
	// Vigil could expect it on.
	Reboot Kind = "@reboot"
	// Unreadable is a line that is neither of the others, or a job this
	// package cannot rewrite (see Line.Reason).
	Unreadable Kind = "unreadable"
)

// SlugSource says where a job's slug came from.
type SlugSource string

// Slug sources.
const (
	// SlugAbove is a "# vigil: slug" comment on the line above the job.
	SlugAbove SlugSource = "comment above"
	// SlugEndOfLine is a "# vigil: slug" comment at the end of the job
	// line (a shell comment, so cron's shell ignores it).
	SlugEndOfLine SlugSource = "end of line"
	// SlugDerived is made from the command; the rewrite writes it as a
	// comment above the job, so it stays when the command changes.
	SlugDerived SlugSource = "derived"
)

// DefaultShell is the shell cron runs commands with when no SHELL= line
// says otherwise.
const DefaultShell = "/bin/sh"

// Options say how to read a crontab.
type Options struct {
	// System reads the system format, with the user to run as after the
	// schedule (/etc/crontab, /etc/cron.d/*).
	System bool
	// TZ is the zone of the job lines that no CRON_TZ= line precedes: the
	// machine's zone, cron's own. "" is UTC.
	TZ string
	// Vigil is the path of the vigil binary that rewritten lines run. A
	// line that runs a program named vigil, or this one, with "run" was
	// rewritten before (and is read back) or wrapped by hand (and is left
	// alone).
	Vigil string
}

// Line is one line of a crontab.
type Line struct {
	Num  int    // 1-based
	Text string // as read, without its newline
	Kind Kind
	// Reason says why a line is Unreadable, and what a Reboot or Env line
	// means for the sync.
	Reason string
	// EnvName is the name an Env line sets.
	EnvName string

	// The fields of a Job line.

	// Prefix is the text before the command: the schedule, the user, and
	// the blanks between them, byte for byte.
	Prefix string
	// Schedule is the time fields joined by single spaces, or the @
	// descriptor.
	Schedule string
	User     string // the user column of the system format
	// Command is the command part as the line holds it: up to the first
	// unescaped %, with cron's \% escapes, without an end-of-line vigil
	// comment. For a line rewritten before, it is the original command.
	Command string
	// Input is the rest of the line from that % on (the % included), ""
	// when there is none.
	Input string
	TZ    string // the zone the schedule is read in: CRON_TZ, or Options.TZ
	Shell string // the shell cron runs the line with
	Slug  string
	// SlugFrom says where Slug came from.
	SlugFrom SlugSource
	// Rewritten is set when the line already ran under vigil run, as
	// Rewrite writes it.
	Rewritten bool
}

var (
	envRE  = regexp.MustCompile(`^[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*=[ \t]*(.*)$`)
	slugRE = regexp.MustCompile(`^[ \t]*#[ \t]*vigil:[ \t]*(\S+)[ \t]*$`)
	// eolSlugRE is a vigil comment at the end of a command: a shell
	// comment, after a blank.
	eolSlugRE = regexp.MustCompile(`[ \t]+#[ \t]*vigil:[ \t]*(\S+)[ \t]*$`)
	validSlug = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,99}$`)
)

// descriptors are the @ schedules cronie knows.
var descriptors = map[string]bool{"@yearly": true, "@annually": true, "@monthly": true, "@weekly": true,
	"@daily": true, "@midnight": true, "@hourly": true}

// Parse reads a crontab's text. Every line is returned, in order; job
// lines get their schedule, zone, shell and slug.
func Parse(text string, o Options) []*Line {
	text = strings.TrimSuffix(text, "\n")
	var lines []*Line
	if text == "" {
		return lines
	}
	tz, shell := o.TZ, DefaultShell
	if tz == "" {
		tz = "UTC"
	}
	var above string // the slug of a vigil comment on the line just above
	for i, raw := range strings.Split(text, "\n") {
		l := &Line{Num: i + 1, Text: raw}
		lines = append(lines, l)
		slugAbove := above
		above = ""
		trimmed := strings.TrimLeft(raw, " \t")
		switch {
		case trimmed == "":
			l.Kind = Blank
			continue
		case trimmed[0] == '#':
			l.Kind = Comment
			if m := slugRE.FindStringSubmatch(raw); m != nil {
				above = m[1]
			}
			continue
		}
		if m := envRE.FindStringSubmatch(raw); m != nil {
			l.Kind, l.EnvName = Env, m[1]
			value := unquoteEnv(m[2])
			switch m[1] {
			case "CRON_TZ":
				tz = cmpOr(value, o.TZ, "UTC")
				l.Reason = "the zone of the job lines below"
			case "SHELL":
				shell = cmpOr(value, DefaultShell)
				l.Reason = "the shell of the job lines below"
			case "TZ":
				l.Reason = "the zone the commands see; cron schedules by CRON_TZ or its own zone"
			}
			continue
		}
		parseJob(l, raw, o)
		if l.Kind != Job {
			continue
		}
		l.TZ, l.Shell = tz, shell
		if slugAbove != "" {
			l.Slug, l.SlugFrom = slugAbove, SlugAbove
		}
		if l.Input == "" {
			if m := eolSlugRE.FindStringSubmatchIndex(l.Command); m != nil {
				if l.Slug == "" {
					l.Slug, l.SlugFrom = l.Command[m[2]:m[3]], SlugEndOfLine
				}
				l.Command = l.Command[:m[0]]
			}
		}
		if orig, ok, wrapped := unwrap(l.Command, o.Vigil); ok {
			l.Command, l.Rewritten = orig, true
		} else if wrapped {
			l.Kind, l.Reason = Unreadable, "runs under vigil run already, set up by hand: left as it is"
			continue
		}
		if l.Slug != "" && !validSlug.MatchString(l.Slug) {
			l.Kind = Unreadable
			l.Reason = fmt.Sprintf("the vigil comment names %q, which is not a slug (1 to 100 of a-z, 0-9, - and _, starting with a letter or digit)", l.Slug)
		}
	}
	named := make(map[string]int)
	for _, l := range lines {
		if l.Kind != Job || l.Slug == "" {
			continue
		}
		if first, ok := named[l.Slug]; ok {
			l.Kind, l.Reason = Unreadable, fmt.Sprintf("the vigil comment names %q, as for the job on line %d: one slug, one monitor", l.Slug, first)
			continue
		}
		named[l.Slug] = l.Num
	}
	deriveSlugs(lines)
	return lines
}

// parseJob reads a job line: its schedule, its user in the system format,
// and its command, cut at its first unescaped %.
func parseJob(l *Line, raw string, o Options) {
	rest := raw
	var fields []string
	word := func() string {
		start := len(rest) - len(strings.TrimLeft(rest, " \t"))
		rest = rest[start:]
		end := strings.IndexAny(rest, " \t")
		if end < 0 {
			end = len(rest)
		}
		w := rest[:end]
		rest = rest[end:]
		return w
	}
	first := word()
	switch {
	case first == "@reboot":
		l.Kind, l.Reason = Reboot, "runs once at boot: there is no schedule to expect it on"
		return
	case strings.HasPrefix(first, "@"):
		if !descriptors[strings.ToLower(first)] {
			l.Kind, l.Reason = Unreadable, fmt.Sprintf("%s is not a schedule cron knows (@yearly, @monthly, @weekly, @daily, @hourly)", first)
			return
		}
		fields = []string{first}
	case strings.ContainsAny(first[:1], "0123456789*"):
		fields = []string{first}
		for len(fields) < 5 {
			w := word()
			if w == "" {
				l.Kind, l.Reason = Unreadable, "a job line needs five time fields and a command"
				return
			}
			fields = append(fields, w)
		}
	default:
		l.Kind, l.Reason = Unreadable, "not a job, an environment setting or a comment"
		return
	}
	if o.System {
		l.User = word()
	}
	l.Prefix = raw[:len(raw)-len(rest)]
	cmd := strings.TrimLeft(rest, " \t")
	l.Prefix += rest[:len(rest)-len(cmd)]
	if strings.TrimSpace(cmd) == "" || o.System && l.User == "" {
		l.Kind, l.Reason = Unreadable, "the job line has no command"
		return
	}
	l.Kind, l.Schedule = Job, strings.Join(fields, " ")
	l.Command, l.Input = cutInput(cmd)
}

// cutInput cuts a command at its first % that no backslash escapes, as
// cronie does (a backslash escapes the character after it, which matters
// only for a %).
func cutInput(cmd string) (command, input string) {
	escaped := false
	for i := 0; i < len(cmd); i++ {
		switch c := cmd[i]; {
		case escaped:
			escaped = false
		case c == '\\':
			escaped = true
		case c == '%':
			return cmd[:i], cmd[i:]
		}
	}
	return cmd, ""
}

// unquoteEnv removes the matching quotes cron allows around a value.
func unquoteEnv(v string) string {
	v = strings.TrimRight(v, " \t")
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

func cmpOr(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// deriveSlugs gives each job without a slug one made from its command. A
// slug that two jobs would share, or that a job's comment names, gets a
// short hash of the job's schedule and command; the same job twice gets
// -2, -3, ...
func deriveSlugs(lines []*Line) {
	taken := make(map[string]int)
	for _, l := range lines {
		if l.Kind == Job {
			if l.Slug != "" {
				taken[l.Slug] += 2 // a named slug is never shared
			} else {
				taken[commandSlug(l.Command)]++
			}
		}
	}
	used := make(map[string]bool)
	for _, l := range lines {
		if l.Kind == Job && l.Slug != "" {
			used[l.Slug] = true
		}
	}
	for _, l := range lines {
		if l.Kind != Job || l.Slug != "" {
			continue
		}
		s := commandSlug(l.Command)
		if taken[s] > 1 {
			sum := sha256.Sum256([]byte(l.Schedule + "\x00" + l.Command))
			s = s[:min(len(s), 92)] + "-" + hex.EncodeToString(sum[:3])
		}
		base := s
		for n := 2; used[s]; n++ {
			s = base[:min(len(base), 96)] + "-" + strconv.Itoa(n)
		}
		used[s] = true
		l.Slug, l.SlugFrom = s, SlugDerived
	}
}

// slugMaxDerived bounds a slug made from a command: long enough to tell
// jobs apart, short enough to read.
const slugMaxDerived = 60

// commandSlug makes a slug of a command: the program's name and its
// arguments, up to the first redirection, pipe or list operator, leaving
// out leading VAR=value assignments and a leading "cd DIR &&".
func commandSlug(cmd string) string {
	words := strings.Fields(cmd)
	if len(words) >= 3 && words[0] == "cd" && words[2] == "&&" {
		words = words[3:]
	}
	var parts []string
	for _, w := range words {
		if len(parts) == 0 && envRE.MatchString(w) && !strings.ContainsAny(w, "/") {
			continue
		}
		if strings.ContainsAny(w, "|;&<>`#") || strings.Contains(w, "$(") {
			break
		}
		if len(parts) == 0 {
			w = path.Base(strings.Trim(w, `"'`))
		}
		parts = append(parts, w)
	}
	s := monitors.Slugify(strings.Join(parts, " "))
	if len(s) > slugMaxDerived {
		s = s[:slugMaxDerived]
		if i := strings.LastIndexAny(s, "-_"); i > 20 {
			s = s[:i]
		}
		s = strings.TrimRight(s, "-_")
	}
	if s == "" || !validSlug.MatchString(s) {
		return "cron-job"
	}
	return s
}

// Target is where a rewritten job line pings: Vigil's base URL and the
// monitor's ping key.
type Target struct {
	URL, PingKey string
}

// Rewrite returns the crontab of lines with each job that target names
// run under vigil run: the schedule, the user and the input part as they
// were, the command in single quotes after `vigil run --url U --key K --
// SHELL -c`. Jobs target does not name, and every other line, are written
// as they were. A derived slug is written as a "# vigil: slug" comment
// above its job. The result ends with a newline, as cron wants.
func Rewrite(lines []*Line, vigil string, target func(l *Line) (Target, bool)) string {
	var b strings.Builder
	for _, l := range lines {
		t, ok := Target{}, false
		if l.Kind == Job {
			t, ok = target(l)
		}
		if !ok {
			b.WriteString(l.Text)
			b.WriteByte('\n')
			continue
		}
		if l.SlugFrom == SlugDerived {
			b.WriteString("# vigil: " + l.Slug + "\n")
		}
		b.WriteString(l.Prefix)
		b.WriteString(Wrap(vigil, t, l.Shell, l.Command))
		b.WriteString(l.Input)
		if l.SlugFrom == SlugEndOfLine {
			b.WriteString(" # vigil: " + l.Slug)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Wrap returns the command part of a rewritten job line: vigil run pinging
// t, running command with shell. command is as the line holds it (with
// cron's \% escapes), and is kept byte for byte in single quotes; % in the
// other words is escaped for cron.
func Wrap(vigil string, t Target, shell, command string) string {
	words := []string{cronEscape(quote(vigil)), "run", "--url", cronEscape(quote(t.URL)),
		"--key", cronEscape(quote(t.PingKey)), "--", cronEscape(quote(shell)), "-c", singleQuote(command)}
	return strings.Join(words, " ")
}

// unwrap reads back a command that Wrap wrote: ok with the original
// command. wrapped reports a command that runs vigil run some other way.
func unwrap(cmd, vigil string) (orig string, ok, wrapped bool) {
	words, err := shellWords(cmd)
	if err != nil || len(words) < 2 || words[1] != "run" {
		return "", false, false
	}
	if prog := words[0]; path.Base(prog) != "vigil" && (vigil == "" || prog != vigil) {
		return "", false, false
	}
	if len(words) == 10 && words[2] == "--url" && words[4] == "--key" && words[6] == "--" && words[8] == "-c" {
		return words[9], true, true
	}
	return "", false, true
}

// safeWord holds the characters a shell word needs no quotes for.
var safeWord = regexp.MustCompile(`^[A-Za-z0-9_@+=:,./-]+$`)

// quote quotes s for a POSIX shell, when it needs it.
func quote(s string) string {
	if safeWord.MatchString(s) {
		return s
	}
	return singleQuote(s)
}

// singleQuote puts s in single quotes; each single quote of s closes
// the quotes, is escaped with a backslash, and opens them again.
func singleQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// cronEscape escapes each % for cron, which would cut the line there.
func cronEscape(s string) string { return strings.ReplaceAll(s, "%", `\%`) }

var errUnterminated = errors.New("unterminated quote")

// shellWords splits a command into words as a POSIX shell does, for the
// quoting Wrap writes: blanks, single quotes, double quotes and
// backslashes. Other shell syntax is taken as part of a word.
func shellWords(s string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		in    bool // inside a word
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, errUnterminated
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
			in = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errUnterminated
			}
			in = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}
