package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/server"
)

// testTime is when the tests' projects are made.
var testTime = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func runWithStdin(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, func(string) string { return "" }, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestUsersCreate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.SQLitePath(t)
	store, err := server.OpenStore(ctx, db, testdb.Logger(t))
	require.NoError(t, err)
	def, err := server.BootstrapIfEmpty(ctx, store, testTime)
	require.NoError(t, err)
	require.NoError(t, store.Close())

	code, out, errOut := runWithStdin(t, "a long password\n", "users", "create", "--email", "Ada@Example.com", "--database", db)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `created the account ada@example.com in the project "Default"`)

	pwFile := filepath.Join(t.TempDir(), "pw")
	require.NoError(t, os.WriteFile(pwFile, []byte("another password\r\n"), 0o600))
	code, out, errOut = runWithStdin(t, "", "users", "create", "--email", "bo@example.com", "--project", "Billing", "--create-project",
		"--password-file", pwFile, "--database", db)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `created the project "Billing"`)

	store, err = server.OpenStore(ctx, db, testdb.Logger(t))
	require.NoError(t, err)
	defer store.Close()
	ada, err := store.UserGetByEmail(ctx, "ada@example.com")
	require.NoError(t, err)
	require.NoError(t, bcrypt.CompareHashAndPassword([]byte(ada.PasswordHash), []byte("a long password")), "the line ending is not part of the password")
	projects, err := store.ProjectListByUser(ctx, ada.ID)
	require.NoError(t, err)
	require.Equal(t, []string{def.Project.ID}, []string{projects[0].ID})
	bo, err := store.UserGetByEmail(ctx, "bo@example.com")
	require.NoError(t, err)
	require.NoError(t, bcrypt.CompareHashAndPassword([]byte(bo.PasswordHash), []byte("another password")))
	projects, err = store.ProjectListByUser(ctx, bo.ID)
	require.NoError(t, err)
	require.Len(t, projects, 1)
	require.Equal(t, "Billing", projects[0].Name)

	// join adds an existing account to another project, by ID or name.
	code, out, errOut = runWithStdin(t, "", "users", "join", "--email", "bo@example.com", "--project", def.Project.ID, "--database", db)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `bo@example.com is a member of the project "Default"`)
	projects, err = store.ProjectListByUser(ctx, bo.ID)
	require.NoError(t, err)
	require.Len(t, projects, 2)
}

func TestUsersCreateRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.SQLitePath(t)
	store, err := server.OpenStore(ctx, db, testdb.Logger(t))
	require.NoError(t, err)
	_, err = store.ProjectCreate(ctx, &monitors.ProjectCreateParams{ID: keys.NewID(), Name: "Default", PingKey: keys.NewProjectPingKey(), Now: testTime})
	require.NoError(t, err)
	require.NoError(t, store.Close())

	code, _, errOut := runWithStdin(t, "a long password", "users", "create", "--email", "ada@example.com", "--database", db)
	require.Equal(t, 0, code, errOut)

	for _, tt := range []struct {
		name  string
		stdin string
		args  []string
		code  int
		want  string
	}{
		{"same email", "a long password", []string{"create", "--email", "ADA@example.com"}, 1, "exists already"},
		{"short password", "short", []string{"create", "--email", "x@example.com"}, 1, "at least 10 characters"},
		{"no password", "", []string{"create", "--email", "x@example.com"}, 1, "no password"},
		{"bad email", "a long password", []string{"create", "--email", "not-an-address"}, 2, "is not an email address"},
		{"unknown project", "a long password", []string{"create", "--email", "x@example.com", "--project", "Nope"}, 1, `no project "Nope": the projects are "Default"`},
		{"join unknown account", "", []string{"join", "--email", "who@example.com", "--project", "Default"}, 1, "no account has the email"},
		{"join without project", "", []string{"join", "--email", "ada@example.com"}, 2, "say which project"},
		{"no action", "", []string{}, 2, "create, join, list, disable, enable, delete or passwd"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runWithStdin(t, tt.stdin, append(append([]string{"users"}, tt.args...), "--database", db)...)
			require.Equal(t, tt.code, code, errOut)
			require.Contains(t, errOut, tt.want)
		})
	}
}

// TestUsersLifecycle runs list, disable, enable, passwd and delete on each
// database.
func TestUsersLifecycle(t *testing.T) {
	t.Parallel()
	for name, dbURL := range map[string]func(testing.TB) string{
		"sqlite":   func(tb testing.TB) string { return testdb.SQLitePath(tb) },
		"postgres": testdb.PostgresURL,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := dbURL(t)
			store, err := server.OpenStore(ctx, db, testdb.Logger(t))
			require.NoError(t, err)
			t.Cleanup(func() { _ = store.Close() })
			_, err = server.BootstrapIfEmpty(ctx, store, testTime)
			require.NoError(t, err)

			code, out, errOut := runWithStdin(t, "", "users", "list", "--database", db)
			require.Equal(t, 0, code, errOut)
			require.Contains(t, out, "no accounts yet")
			code, _, errOut = runWithStdin(t, "a long password\n", "users", "create", "--email", "ada@example.com", "--database", db)
			require.Equal(t, 0, code, errOut)
			ada, err := store.UserGetByEmail(ctx, "ada@example.com")
			require.NoError(t, err)
			session := func(hash string) {
				_, err := store.SessionCreate(ctx, &monitors.SessionCreateParams{ID: keys.NewID(), UserID: ada.ID, TokenHash: hash,
					CSRFToken: "c", Now: time.Now(), ExpiresAt: time.Now().Add(time.Hour)})
				require.NoError(t, err)
			}
			signedIn := func(hash string) bool {
				_, err := store.SessionGet(ctx, &monitors.SessionGetParams{TokenHash: hash, Now: time.Now()})
				return err == nil
			}

			code, out, errOut = runWithStdin(t, "", "users", "list", "--database", db)
			require.Equal(t, 0, code, errOut)
			require.Regexp(t, `ada@example\.com\s+active\s+\S+\s+Default`, out)

			session("s1")
			code, out, errOut = runWithStdin(t, "", "users", "disable", "--email", "ADA@example.com", "--database", db)
			require.Equal(t, 0, code, errOut)
			require.Contains(t, out, "disabled ada@example.com")
			require.False(t, signedIn("s1"), "disabling ends the sessions")
			code, out, _ = runWithStdin(t, "", "users", "list", "--database", db)
			require.Equal(t, 0, code)
			require.Contains(t, out, "disabled since ")
			code, out, errOut = runWithStdin(t, "", "users", "enable", "--email", "ada@example.com", "--database", db)
			require.Equal(t, 0, code, errOut)
			require.Contains(t, out, "enabled ada@example.com")
			got, err := store.UserGet(ctx, ada.ID)
			require.NoError(t, err)
			require.Nil(t, got.DisabledAt)

			session("s2")
			code, out, errOut = runWithStdin(t, "a new long password\n", "users", "passwd", "--email", "ada@example.com", "--database", db)
			require.Equal(t, 0, code, errOut)
			require.Contains(t, out, "set a new password for ada@example.com")
			got, err = store.UserGet(ctx, ada.ID)
			require.NoError(t, err)
			require.NoError(t, bcrypt.CompareHashAndPassword([]byte(got.PasswordHash), []byte("a new long password")))
			require.False(t, signedIn("s2"), "a new password ends the sessions")
			code, _, errOut = runWithStdin(t, "short\n", "users", "passwd", "--email", "ada@example.com", "--database", db)
			require.NotEqual(t, 0, code)
			require.Contains(t, errOut, "at least 10 characters")

			code, out, errOut = runWithStdin(t, "", "users", "delete", "--email", "ada@example.com", "--database", db)
			require.Equal(t, 0, code, errOut)
			require.Contains(t, out, "deleted ada@example.com")
			_, err = store.UserGet(ctx, ada.ID)
			require.ErrorIs(t, err, monitors.ErrNotFound)

			code, _, errOut = runWithStdin(t, "", "users", "disable", "--email", "ada@example.com", "--database", db)
			require.NotEqual(t, 0, code)
			require.Contains(t, errOut, "no account has the email ada@example.com")
			code, _, errOut = runWithStdin(t, "", "users", "delete", "--database", db)
			require.NotEqual(t, 0, code)
			require.Contains(t, errOut, "--email: say which account")
		})
	}
}
