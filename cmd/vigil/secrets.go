package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/secrets"
	"github.com/vigilhq/vigil/server"
)

const secretsUsage = `Usage: vigil secrets <action> [--database URL] [--secret-key-file FILE]

Actions:
  rotate   make a new key, re-encrypt every channel secret under it, and
           remove the old keys from the key file; Vigil keeps serving
  init     make a new key file (for PostgreSQL, where Vigil does not make one)
`

// secretsCmd runs "vigil secrets rotate|init".
func secretsCmd(env *cmdEnv, args []string) error {
	if len(args) == 0 || (args[0] != "rotate" && args[0] != "init") {
		fmt.Fprint(env.stderr, secretsUsage)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			return errHelp
		}
		return usageError{"name an action: rotate or init"}
	}
	action := args[0]
	var cfg server.Config
	fs := newFlagSet(env)
	fs.Usage = func() {
		fmt.Fprint(env.stderr, secretsUsage)
		fs.PrintDefaults()
	}
	if err := parseSettings(env, fs, databaseSettings(&cfg), args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	path, err := server.SecretKeyFile(cfg.DatabaseURL, cfg.SecretKeyFile)
	if err != nil {
		return err
	}
	if action == "init" {
		id, err := secrets.Create(path)
		if err != nil {
			return fmt.Errorf("%w (vigil secrets init never replaces a key file; to change keys, use vigil secrets rotate)", err)
		}
		fmt.Fprintf(env.stdout, "created %s with key %s (mode 0600): give every Vigil on this database VIGIL_SECRET_KEY_FILE=%s, and back it up apart from the database\n", path, id, path)
		return nil
	}
	return rotateSecrets(env, cfg, path)
}

// rotateSecrets puts a new key first in the key file, re-encrypts every
// channel config under it, then removes the old keys. Serving replicas
// follow the file (see package secrets): from the moment it holds the new
// key they seal with it, and they open what was re-encrypted. Before it
// changes the file, every stored config is opened with the keys it holds,
// so a wrong key file changes nothing. The keys removed are kept in memory
// until the end, so a config a replica sealed with an old key meanwhile
// is re-encrypted by the second pass.
func rotateSecrets(env *cmdEnv, cfg server.Config, path string) error {
	ok, err := secrets.Exists(path)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("no key file at %s: nothing to rotate (vigil serve makes it beside a SQLite database; "+
			"with PostgreSQL make it with vigil secrets init)", path)
	}
	logger := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	kr, err := secrets.Load(path)
	if err != nil {
		return err
	}
	old := kr.Current()
	kr.Retain(kr)
	// Opening seals what is not sealed under the current key yet, and
	// fails on a config the file's keys cannot open.
	store, err := server.OpenStoreWithKeys(env.ctx, cfg.DatabaseURL, kr, logger)
	if err != nil {
		return err
	}
	defer store.Close()
	id, err := secrets.AddKey(path)
	if err != nil {
		return err
	}
	n, err := reseal(env, store)
	if err != nil {
		return fmt.Errorf("re-encrypt under the new key %s (the key file holds it and the old keys; run vigil secrets rotate again): %w", id, err)
	}
	dropped, err := secrets.DropOldKeys(path)
	if err != nil {
		return err
	}
	late, err := reseal(env, store)
	if err != nil {
		return fmt.Errorf("re-encrypt under the new key %s: %w", id, err)
	}
	fmt.Fprintf(env.stdout, "key file %s: new key %s; re-encrypted %d channel configs (key %s before); removed the old keys %s\n",
		path, id, n+late, old, strings.Join(dropped, ", "))
	return nil
}

// resealer is the store method that re-encrypts channel configs.
type resealer interface {
	ChannelConfigReseal(ctx context.Context) (int, error)
}

func reseal(env *cmdEnv, store monitors.Store) (int, error) {
	rs, ok := store.(resealer)
	if !ok {
		return 0, fmt.Errorf("this store cannot re-encrypt channel configs")
	}
	return rs.ChannelConfigReseal(env.ctx)
}
