package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/server"
	"github.com/vigilhq/vigil/web"
)

const usersUsage = `Usage:
  vigil users create --email EMAIL [--project ID|NAME] [--create-project] [--password-file FILE] [--database URL]
  vigil users join   --email EMAIL --project ID|NAME [--create-project] [--database URL]
  vigil users list    [--database URL]
  vigil users disable --email EMAIL [--database URL]
  vigil users enable  --email EMAIL [--database URL]
  vigil users delete  --email EMAIL [--database URL]
  vigil users passwd  --email EMAIL [--password-file FILE] [--database URL]

create makes a dashboard account in a project (by default the first one).
The password is read from --password-file, or else from standard input:
  printf '%s' "$PASSWORD" | vigil users create --email ada@example.com --project Default
join makes an existing account a member of another project.
list shows every account, its projects and whether it is disabled.
disable stops an account from signing in and ends its sessions at once;
enable lets it sign in again. delete removes an account, its memberships
and its sessions. passwd sets a new password (read as for create) and ends
every session of the account.
`

// usersCmd runs "vigil users create|join|list|disable|enable|delete|passwd".
func usersCmd(env *cmdEnv, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "list", "disable", "enable", "delete", "passwd":
			return usersLifecycleCmd(env, args[0], args[1:])
		}
	}
	if len(args) == 0 || (args[0] != "create" && args[0] != "join") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			_, _ = io.WriteString(env.stdout, usersUsage)
			return errHelp
		}
		return usageError{"give an action: create, join, list, disable, enable, delete or passwd; see vigil users --help"}
	}
	action := args[0]
	var (
		cfg           server.Config
		email         string
		project       string
		passwordFile  string
		createProject bool
	)
	fs := newFlagSet(env)
	fs.Usage = func() {
		_, _ = io.WriteString(env.stderr, usersUsage)
		fs.PrintDefaults()
	}
	fs.StringVar(&email, "email", "", "the person's email address, with which they sign in")
	fs.StringVar(&project, "project", "", "the project's ID or name (default: the first project)")
	fs.BoolVar(&createProject, "create-project", false, "create the project named by --project when there is none")
	if action == "create" {
		fs.StringVar(&passwordFile, "password-file", "", "read the password from this file (default: standard input)")
	}
	if err := parseSettings(env, fs, databaseSettings(&cfg), args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if err := web.CheckEmail(email); err != nil {
		return usageError{"--email: " + err.Error()}
	}
	if action == "join" && project == "" {
		return usageError{"--project: say which project to join"}
	}
	if createProject && project == "" {
		return usageError{"--create-project needs --project NAME"}
	}

	var hash string
	if action == "create" {
		password, err := readPassword(env, passwordFile)
		if err != nil {
			return err
		}
		if hash, err = web.HashPassword(password); err != nil {
			return err
		}
	}

	logger := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	store, err := server.OpenStore(env.ctx, cfg.DatabaseURL, logger)
	if err != nil {
		return err
	}
	defer store.Close()
	p, err := findProject(env, store, project, createProject)
	if err != nil {
		return err
	}

	if action == "join" {
		u, err := store.UserGetByEmail(env.ctx, email)
		if errors.Is(err, monitors.ErrNotFound) {
			return fmt.Errorf("no account has the email %s: make it with vigil users create", email)
		}
		if err != nil {
			return err
		}
		if err := store.ProjectMemberAdd(env.ctx, &monitors.ProjectMemberAddParams{ProjectID: p.ID, UserID: u.ID}); err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "%s is a member of the project %q\n", u.Email, p.Name)
		return nil
	}
	u, err := store.UserCreate(env.ctx, &monitors.UserCreateParams{ID: keys.NewID(), Email: email, PasswordHash: hash,
		ProjectIDs: []string{p.ID}})
	if errors.Is(err, monitors.ErrConflict) {
		return fmt.Errorf("an account with the email %s exists already (vigil users join adds it to another project)", monitors.NormalizeEmail(email))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "created the account %s in the project %q; it signs in at the dashboard\n", u.Email, p.Name)
	return nil
}

// readPassword reads the password from file, or from standard input: its
// first line, without the line ending.
func readPassword(env *cmdEnv, file string) (string, error) {
	var r io.Reader = env.stdin
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return "", fmt.Errorf("read password: %w", err)
		}
		defer f.Close()
		r = f
	}
	if r == nil {
		return "", errors.New("no password: give --password-file, or the password on standard input")
	}
	line, err := bufio.NewReader(io.LimitReader(r, 4096)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read password: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("no password: give --password-file, or the password on standard input")
	}
	return line, nil
}

// findProject finds a project by ID or name; "" is the first project.
func findProject(env *cmdEnv, store monitors.Store, ref string, create bool) (*monitors.Project, error) {
	projects, err := store.ProjectList(env.ctx)
	if err != nil {
		return nil, err
	}
	if ref == "" {
		if len(projects) == 0 {
			return nil, errors.New("this database has no project yet: start vigil serve once, or give --project NAME --create-project")
		}
		return projects[0], nil
	}
	var names []string
	for _, p := range projects {
		if p.ID == ref || p.Name == ref {
			return p, nil
		}
		names = append(names, fmt.Sprintf("%q", p.Name))
	}
	for _, p := range projects {
		if strings.EqualFold(p.Name, ref) {
			return p, nil
		}
	}
	if create {
		p, err := store.ProjectCreate(env.ctx, &monitors.ProjectCreateParams{ID: keys.NewID(), Name: ref, PingKey: keys.NewProjectPingKey()})
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(env.stdout, "created the project %q; its ping key is %s\n", p.Name, p.PingKey)
		return p, nil
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no project %q: this database has none (add --create-project to make it)", ref)
	}
	return nil, fmt.Errorf("no project %q: the projects are %s (add --create-project to make a new one)", ref, strings.Join(names, ", "))
}

// usersLifecycleCmd runs "vigil users list|disable|enable|delete|passwd".
func usersLifecycleCmd(env *cmdEnv, action string, args []string) error {
	var (
		cfg          server.Config
		email        string
		passwordFile string
	)
	fs := newFlagSet(env)
	fs.Usage = func() {
		_, _ = io.WriteString(env.stderr, usersUsage)
		fs.PrintDefaults()
	}
	if action != "list" {
		fs.StringVar(&email, "email", "", "the account's email address")
	}
	if action == "passwd" {
		fs.StringVar(&passwordFile, "password-file", "", "read the new password from this file (default: standard input)")
	}
	if err := parseSettings(env, fs, databaseSettings(&cfg), args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if action != "list" && strings.TrimSpace(email) == "" {
		return usageError{"--email: say which account"}
	}
	var hash string
	if action == "passwd" {
		password, err := readPassword(env, passwordFile)
		if err != nil {
			return err
		}
		if hash, err = web.HashPassword(password); err != nil {
			return err
		}
	}
	logger := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	store, err := server.OpenStore(env.ctx, cfg.DatabaseURL, logger)
	if err != nil {
		return err
	}
	defer store.Close()
	if action == "list" {
		return listUsers(env, store)
	}
	u, err := store.UserGetByEmail(env.ctx, email)
	if errors.Is(err, monitors.ErrNotFound) {
		return fmt.Errorf("no account has the email %s (vigil users list shows them)", monitors.NormalizeEmail(email))
	}
	if err != nil {
		return err
	}
	switch action {
	case "disable":
		now := time.Now()
		if _, err := store.UserSetDisabled(env.ctx, &monitors.UserSetDisabledParams{ID: u.ID, DisabledAt: &now}); err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "disabled %s: it cannot sign in, and its sessions have ended\n", u.Email)
	case "enable":
		if _, err := store.UserSetDisabled(env.ctx, &monitors.UserSetDisabledParams{ID: u.ID}); err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "enabled %s: it can sign in again\n", u.Email)
	case "delete":
		if err := store.UserDelete(env.ctx, u.ID); err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "deleted %s, its memberships and its sessions\n", u.Email)
	case "passwd":
		if err := store.UserSetPassword(env.ctx, &monitors.UserSetPasswordParams{ID: u.ID, PasswordHash: hash}); err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "set a new password for %s; its sessions have ended\n", u.Email)
	}
	return nil
}

// listUsers prints every account: email, state and projects.
func listUsers(env *cmdEnv, store monitors.Store) error {
	users, err := store.UserList(env.ctx)
	if err != nil {
		return err
	}
	if len(users) == 0 {
		fmt.Fprintln(env.stdout, "no accounts yet: vigil users create makes one")
		return nil
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "EMAIL\tSTATE\tCREATED\tPROJECTS")
	for _, u := range users {
		projects, err := store.ProjectListByUser(env.ctx, u.ID)
		if err != nil {
			return err
		}
		var names []string
		for _, p := range projects {
			names = append(names, p.Name)
		}
		state := "active"
		if u.DisabledAt != nil {
			state = "disabled since " + u.DisabledAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", u.Email, state, u.CreatedAt.UTC().Format(time.RFC3339), strings.Join(names, ", "))
	}
	return tw.Flush()
}
