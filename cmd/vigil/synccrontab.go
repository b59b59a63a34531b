package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/vigilhq/vigil/api"
	"github.com/vigilhq/vigil/crontab"
)

const syncUsage = `Usage: vigil sync crontab [--file F] [--system] [--write] [--url URL] [--api-key KEY] [--tz ZONE] [--vigil PATH] [--backup FILE]

Reads a crontab (the user's, from "crontab -l", or --file F), creates or
updates one monitor per job line over Vigil's API (by slug: a "# vigil: slug"
comment above the line or at its end, or one made from the command), with
the line's schedule (dialect cronie, in the zone of CRON_TZ or the machine's),
and prints the crontab with each job run under "vigil run". With --write it
installs that crontab ("crontab -", or over F) after keeping a backup.
Lines it cannot read, @reboot, environment lines and comments are kept as
they are and listed on stderr. Running it again changes nothing.
`

// syncCmd runs "vigil sync crontab".
func syncCmd(env *cmdEnv, args []string) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprint(env.stderr, syncUsage)
		return errHelp
	}
	if len(args) == 0 || args[0] != "crontab" {
		return usageError{"what to sync: vigil sync crontab [flags]"}
	}
	fs := newFlagSet(env)
	var (
		file    = fs.String("file", "", "read this crontab file instead of \"crontab -l\"; --write then writes it")
		system  = fs.Bool("system", false, "the system format, with a user column (the default for /etc/crontab and /etc/cron.d/*)")
		write   = fs.Bool("write", false, "install the rewritten crontab, after keeping a backup of the old one")
		base    = fs.String("url", "", "Vigil's base URL (VIGIL_URL)")
		apiKey  = fs.String("api-key", "", "a read-write API key of the project (VIGIL_API_KEY)")
		tz      = fs.String("tz", "", "the zone of job lines no CRON_TZ= line precedes (default: the machine's zone)")
		vigil   = fs.String("vigil", "", "the vigil binary the rewritten lines run (default: this one)")
		backup  = fs.String("backup", "", "where --write keeps the old crontab (default: F.vigil-backup-TIME, or vigil/crontab-backup-TIME in the user's config directory)")
		timeout = fs.Duration("timeout", 30*time.Second, "timeout of each request to Vigil")
	)
	fs.Usage = func() {
		fmt.Fprint(env.stderr, syncUsage+"\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected %q", fs.Arg(0))}
	}
	c, err := newAPIClient(env, *base, *apiKey, *timeout)
	if err != nil {
		return err
	}
	if *vigil == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("find this vigil binary (give --vigil): %w", err)
		}
		if exe, err = filepath.EvalSymlinks(exe); err != nil {
			return fmt.Errorf("find this vigil binary (give --vigil): %w", err)
		}
		*vigil = exe
	}
	if *tz == "" {
		*tz = localZone()
	}
	if *file != "" && !isSet(fs, "system") {
		abs, _ := filepath.Abs(*file)
		*system = abs == "/etc/crontab" || strings.HasPrefix(abs, "/etc/cron.d/")
	}

	var old string
	if *file != "" {
		b, err := os.ReadFile(*file)
		if err != nil {
			return fmt.Errorf("read the crontab: %w", err)
		}
		old = string(b)
	} else {
		out, err := runCrontab(env.ctx, nil, "-l")
		if err != nil {
			return fmt.Errorf("read the crontab with crontab -l: %w", err)
		}
		old = out
	}

	lines := crontab.Parse(old, crontab.Options{System: *system, TZ: *tz, Vigil: *vigil})
	res, err := syncCrontab(env.ctx, c, lines)
	if err != nil {
		return err
	}
	rewritten := crontab.Rewrite(lines, *vigil, func(l *crontab.Line) (crontab.Target, bool) {
		t, ok := res.targets[l]
		return t, ok
	})
	fmt.Fprint(env.stdout, rewritten)
	report(env.stderr, lines, res)

	if !*write {
		return nil
	}
	if rewritten == old {
		fmt.Fprintln(env.stderr, "the crontab is as it should be: nothing written")
		return nil
	}
	path, err := keepBackup(*backup, *file, old)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stderr, "the old crontab is kept in %s\n", path)
	if *file != "" {
		if err := writeFileAtomic(*file, rewritten); err != nil {
			return fmt.Errorf("write the crontab: %w", err)
		}
		fmt.Fprintf(env.stderr, "wrote %s\n", *file)
		return nil
	}
	if _, err := runCrontab(env.ctx, strings.NewReader(rewritten), "-"); err != nil {
		return fmt.Errorf("install the crontab with crontab -: %w", err)
	}
	fmt.Fprintln(env.stderr, "installed the crontab")
	return nil
}

// isSet reports whether the command line set the flag name.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

// syncResult is what the sync did, per job line.
type syncResult struct {
	targets                     map[*crontab.Line]crontab.Target
	created, updated, unchanged []*crontab.Line
}

// syncCrontab creates or updates the monitor of each job line. A line
// whose monitor Vigil refuses (a schedule it cannot read, a zone it does
// not know) becomes unreadable, with Vigil's reason; any other failure
// stops the sync.
func syncCrontab(ctx context.Context, c *apiClient, lines []*crontab.Line) (*syncResult, error) {
	existing, err := c.monitors(ctx)
	if err != nil {
		return nil, err
	}
	res := &syncResult{targets: make(map[*crontab.Line]crontab.Target)}
	for _, l := range lines {
		if l.Kind != crontab.Job {
			continue
		}
		want := api.Schedule{Kind: "cron", Expr: l.Schedule, TZ: l.TZ, Dialect: "cronie"}
		m, ok := existing[l.Slug]
		var refusal *apiRefusal
		switch {
		case ok && m.Schedule == want:
			res.unchanged = append(res.unchanged, l)
		case ok:
			m, err = c.patch(ctx, m.ID, map[string]any{"schedule": want})
			if err == nil {
				res.updated = append(res.updated, l)
			}
		default:
			m, err = c.create(ctx, map[string]any{"name": l.Slug, "slug": l.Slug, "schedule": want})
			if err == nil {
				res.created = append(res.created, l)
				existing[l.Slug] = m
			}
		}
		if errors.As(err, &refusal) {
			l.Kind, l.Reason = crontab.Unreadable, "Vigil refused its monitor: "+refusal.msg
			err = nil
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("line %d (%s): %w", l.Num, l.Slug, err)
		}
		if m.PingKey == "" {
			return nil, errors.New("the API key is read-only: sync needs a read-write key")
		}
		res.targets[l] = crontab.Target{URL: c.base, PingKey: m.PingKey}
	}
	return res, nil
}

// report lists on w what the sync did, and every line it left as it was.
func report(w io.Writer, lines []*crontab.Line, res *syncResult) {
	names := func(ls []*crontab.Line) string {
		var s []string
		for _, l := range ls {
			s = append(s, l.Slug)
		}
		return strings.Join(s, ", ")
	}
	fmt.Fprintf(w, "monitors: %d created, %d updated, %d unchanged\n", len(res.created), len(res.updated), len(res.unchanged))
	for _, g := range []struct {
		what string
		ls   []*crontab.Line
	}{{"created", res.created}, {"updated", res.updated}} {
		if len(g.ls) > 0 {
			fmt.Fprintf(w, "  %s: %s\n", g.what, names(g.ls))
		}
	}
	var kept []string
	for _, l := range lines {
		switch l.Kind {
		case crontab.Job, crontab.Blank:
		case crontab.Comment:
			kept = append(kept, fmt.Sprintf("  line %d: comment", l.Num))
		case crontab.Env:
			s := fmt.Sprintf("  line %d: environment %s", l.Num, l.EnvName)
			if l.Reason != "" {
				s += " (" + l.Reason + ")"
			}
			kept = append(kept, s)
		default:
			kept = append(kept, fmt.Sprintf("  line %d: %s: %s\n      %s", l.Num, l.Kind, l.Reason, l.Text))
		}
	}
	if len(kept) > 0 {
		fmt.Fprintln(w, "left as they are:")
		for _, s := range kept {
			fmt.Fprintln(w, s)
		}
	}
}

// localZone is the machine's zone, cron's own: the zone /etc/localtime
// links to, or /etc/timezone names; UTC when neither says.
func localZone() string {
	if target, err := os.Readlink("/etc/localtime"); err == nil {
		if _, zone, ok := strings.Cut(target, "zoneinfo/"); ok && zone != "" {
			return zone
		}
	}
	if b, err := os.ReadFile("/etc/timezone"); err == nil {
		if zone := strings.TrimSpace(string(b)); zone != "" {
			return zone
		}
	}
	return "UTC"
}

// runCrontab runs the crontab command with args, and stdin when not nil.
func runCrontab(ctx context.Context, stdin io.Reader, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "crontab", args...)
	cmd.Stdin = stdin
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(errOut.String()); msg != "" {
			return "", fmt.Errorf("%w: %s", err, msg)
		}
		return "", err
	}
	return out.String(), nil
}

// keepBackup writes the old crontab to path, or by default beside file
// (or, for the user's crontab, in the user's config directory), readable
// by its owner only, and returns where.
func keepBackup(path, file, old string) (string, error) {
	stamp := time.Now().UTC().Format("20060102T150405Z")
	if path == "" && file != "" {
		path = file + ".vigil-backup-" + stamp
	}
	if path == "" {
		dir, err := os.UserConfigDir()
		if err != nil {
			return "", fmt.Errorf("find where to keep the backup (give --backup): %w", err)
		}
		dir = filepath.Join(dir, "vigil")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", fmt.Errorf("keep the backup: %w", err)
		}
		path = filepath.Join(dir, "crontab-backup-"+stamp)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("keep the backup: %w", err)
	}
	if _, err := f.WriteString(old); err != nil {
		_ = f.Close()
		return "", fmt.Errorf("keep the backup: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("keep the backup: %w", err)
	}
	return path, nil
}

// writeFileAtomic replaces path with text, keeping its mode: cron never
// reads half a file.
func writeFileAtomic(path, text string) error {
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".vigil-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(text); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// apiClient is the little of Vigil's management API the sync uses.
type apiClient struct {
	base, key string
	http      *http.Client
}

// newAPIClient makes the management API's client of the commands that
// use one, from --url and --api-key or else VIGIL_URL and VIGIL_API_KEY.
// The environment is read after the flags, not as their defaults, so
// that -h never prints the key.
func newAPIClient(env *cmdEnv, base, key string, timeout time.Duration) (*apiClient, error) {
	if base == "" {
		base = env.getenv("VIGIL_URL")
	}
	if key == "" {
		key = env.getenv("VIGIL_API_KEY")
	}
	var problems []string
	if base == "" {
		problems = append(problems, "no Vigil URL: set --url or VIGIL_URL")
	}
	if key == "" {
		problems = append(problems, "no API key: set --api-key or VIGIL_API_KEY")
	}
	if len(problems) > 0 {
		return nil, usageError{strings.Join(problems, "; ")}
	}
	return &apiClient{base: strings.TrimRight(base, "/"), key: key, http: &http.Client{Timeout: timeout}}, nil
}

// apiRefusal is a 400 or 422 of the API: the monitor asked for is not
// valid.
type apiRefusal struct{ msg string }

func (e *apiRefusal) Error() string { return e.msg }

func (c *apiClient) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Error string `json:"error"`
		}
		msg := strings.TrimSpace(string(data))
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			msg = e.Error
		}
		if resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusUnprocessableEntity {
			return &apiRefusal{msg: msg}
		}
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, msg)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
		}
	}
	return nil
}

// monitors returns every monitor of the project, by slug.
func (c *apiClient) monitors(ctx context.Context) (map[string]api.Monitor, error) {
	out := make(map[string]api.Monitor)
	next := "/api/v1/monitors?limit=" + fmt.Sprint(api.PageSizeMax)
	for next != "" {
		var page api.MonitorList
		if err := c.do(ctx, http.MethodGet, next, nil, &page); err != nil {
			var r *apiRefusal
			if errors.As(err, &r) {
				return nil, fmt.Errorf("list monitors: %s", r.msg)
			}
			return nil, fmt.Errorf("list monitors: %w", err)
		}
		for _, m := range page.Monitors {
			out[m.Slug] = m
		}
		next = ""
		if page.Next != nil {
			u, err := url.Parse(*page.Next)
			if err != nil {
				return nil, fmt.Errorf("list monitors: next page %q: %w", *page.Next, err)
			}
			next = u.RequestURI()
		}
	}
	return out, nil
}

func (c *apiClient) create(ctx context.Context, body any) (api.Monitor, error) {
	var m api.Monitor
	err := c.do(ctx, http.MethodPost, "/api/v1/monitors", body, &m)
	return m, err
}

func (c *apiClient) patch(ctx context.Context, id string, body any) (api.Monitor, error) {
	var m api.Monitor
	err := c.do(ctx, http.MethodPatch, "/api/v1/monitors/"+url.PathEscape(id), body, &m)
	return m, err
}
