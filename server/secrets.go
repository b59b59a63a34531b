package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/secrets"
)

// This file wires the encryption of channel secrets at rest: where the key
// file is (SecretKeyFile), loading or creating it (LoadSecretKeys), and
// sealing at start the configs that are not yet sealed under its current
// key (sealChannelConfigs), which is how the plain-text secrets of a
// database from before encryption get encrypted.

// errNoKeyFile is returned when PostgreSQL is used without a key file.
var errNoKeyFile = errors.New("server: no secret key file")

// SecretKeyFile returns the key file of a database: keyFile when set;
// otherwise, for a SQLite database, the file beside it named as it is with
// ".key" added (./vigil.db.key for ./vigil.db). PostgreSQL has no default:
// every replica must read the same file, so the operator names it.
func SecretKeyFile(databaseURL, keyFile string) (string, error) {
	if keyFile != "" {
		return keyFile, nil
	}
	if IsPostgresURL(databaseURL) {
		return "", fmt.Errorf("%w: VIGIL_SECRET_KEY_FILE must be set with PostgreSQL, to the same file on every replica "+
			"(make one with \"vigil secrets init --secret-key-file FILE\")", errNoKeyFile)
	}
	return SQLitePath(databaseURL) + ".key", nil
}

// LoadSecretKeys loads the key file of a database (see SecretKeyFile).
// Beside a SQLite database, a key file that does not exist is created,
// with one new key and mode 0600, and that is logged; on PostgreSQL it
// must exist, since replicas that each made their own could not read each
// other's secrets.
func LoadSecretKeys(databaseURL, keyFile string, logger *slog.Logger) (*secrets.Keyring, error) {
	path, err := SecretKeyFile(databaseURL, keyFile)
	if err != nil {
		return nil, err
	}
	ok, err := secrets.Exists(path)
	if err != nil {
		return nil, err
	}
	if !ok {
		if IsPostgresURL(databaseURL) {
			return nil, fmt.Errorf("%w: VIGIL_SECRET_KEY_FILE %s does not exist; with PostgreSQL, Vigil does not make one, "+
				"since every replica must read the same file: make it once with \"vigil secrets init --secret-key-file %s\" "+
				"and give it to every replica", errNoKeyFile, path, path)
		}
		id, err := secrets.Create(path)
		if err != nil {
			return nil, err
		}
		logger.Warn("created the secret key file that encrypts channel secrets: back it up apart from the database, which cannot be read without it",
			"secret_key_file", path, "key_id", id)
	}
	kr, err := secrets.Load(path)
	if err != nil {
		return nil, err
	}
	return kr, nil
}

// resealer is what the stores do to seal every stored channel config under
// the current key (plan.Scripts.ChannelConfigReseal).
type resealer interface {
	ChannelConfigReseal(ctx context.Context) (int, error)
}

// sealChannelConfigs seals every channel config of the store not sealed
// under the key file's current key: those written before encryption, and
// those a rotation left behind. A config it cannot open stops the start:
// the key file is not this database's.
func sealChannelConfigs(ctx context.Context, store monitors.Store, kr *secrets.Keyring, logger *slog.Logger) error {
	rs, ok := store.(resealer)
	if !ok {
		return fmt.Errorf("encrypt channel configs: the store cannot")
	}
	n, err := rs.ChannelConfigReseal(ctx)
	if errors.Is(err, secrets.ErrUnknownKey) || errors.Is(err, secrets.ErrWrongKey) {
		return fmt.Errorf("%w; is %s the key file of this database? (VIGIL_SECRET_KEY_FILE)", err, kr.Path())
	}
	if err != nil {
		return err
	}
	if n > 0 {
		logger.Info("encrypted channel configs with the secret key file", "channels", n,
			"secret_key_file", kr.Path(), "key_id", kr.Current())
	}
	logger.Info("channel secrets are encrypted at rest", "secret_key_file", kr.Path(), "key_id", kr.Current())
	return nil
}

// OpenSealedStore is OpenStore for commands that read or write channels:
// the store seals channel configs with the database's key file (see
// LoadSecretKeys), and every config not yet sealed under its current key
// is sealed before it returns.
func OpenSealedStore(ctx context.Context, url, keyFile string, logger *slog.Logger) (monitors.Store, *secrets.Keyring, error) {
	kr, err := LoadSecretKeys(url, keyFile, logger)
	if err != nil {
		return nil, nil, err
	}
	s, err := OpenStoreWithKeys(ctx, url, kr, logger)
	if err != nil {
		return nil, nil, err
	}
	return s, kr, nil
}

// OpenStoreWithKeys opens the store as OpenStore does, sealing channel
// configs with kr, and seals those not yet sealed under its current key.
func OpenStoreWithKeys(ctx context.Context, url string, kr *secrets.Keyring, logger *slog.Logger) (monitors.Store, error) {
	s, _, err := openStore(ctx, url, logger, nil, storeLimits{sealer: kr})
	if err != nil {
		return nil, err
	}
	if err := sealChannelConfigs(ctx, s, kr, logger); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}
