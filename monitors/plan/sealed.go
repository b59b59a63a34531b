package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/vigilhq/vigil/monitors"
)

// Channel configs are encrypted at rest here, once for both stores: every
// write of a config seals it (configArg), every read opens it
// (openChannel), and ChannelConfigReseal brings every stored config under
// the current key. A sealed config is stored as the JSON object
// {"$sealed": "v1:<key id>:<ciphertext>"}, so the column keeps its type
// (jsonb on PostgreSQL) and a config written before encryption, plain
// JSON, still reads until it is sealed. No kind has a "$sealed" key: each
// kind refuses keys it does not know.

// Sealer encrypts channel configs at rest; package secrets' Keyring is one.
type Sealer interface {
	// Seal encrypts plaintext under the current key; aad is bound to the
	// result.
	Seal(plaintext, aad []byte) (string, error)
	// Open decrypts what Seal returned for the same aad.
	Open(sealed string, aad []byte) ([]byte, error)
	// Current is the ID of the key Seal uses now.
	Current() string
	// KeyID is the ID of the key that sealed a value Seal returned.
	KeyID(sealed string) string
}

// ErrNoSecretKey is returned when a stored channel config is encrypted and
// the store has no Sealer to open it with.
var ErrNoSecretKey = errors.New("plan: the channel config is encrypted and no secret key is loaded (VIGIL_SECRET_KEY_FILE)")

const sealedField = "$sealed"

// channelAAD binds a sealed config to its channel: a config copied to
// another channel's row does not open.
func channelAAD(channelID string) []byte { return []byte("vigil channel config " + channelID) }

// sealedToken returns the sealed value of a stored config, and false for a
// plain config.
func sealedToken(raw []byte) (string, bool) {
	if !bytes.Contains(raw, []byte(`"`+sealedField+`"`)) {
		return "", false
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(raw, &env); err != nil || len(env) != 1 {
		return "", false
	}
	var tok string
	if err := json.Unmarshal(env[sealedField], &tok); err != nil {
		return "", false
	}
	return tok, true
}

// configArg returns a channel's config as it is stored: sealed when the
// store has a Sealer.
func (s *Scripts) configArg(channelID string, raw []byte) (string, error) {
	plain := ConfigArg(raw)
	if s.Sealer == nil {
		return plain, nil
	}
	tok, err := s.Sealer.Seal([]byte(plain), channelAAD(channelID))
	if err != nil {
		return "", fmt.Errorf("encrypt the config of channel %s: %w", channelID, err)
	}
	b, err := json.Marshal(map[string]string{sealedField: tok})
	if err != nil {
		return "", fmt.Errorf("encrypt the config of channel %s: %w", channelID, err)
	}
	return string(b), nil
}

// openConfig returns the plain config of a stored one.
func (s *Scripts) openConfig(channelID string, raw []byte) ([]byte, error) {
	tok, ok := sealedToken(raw)
	if !ok {
		return raw, nil
	}
	if s.Sealer == nil {
		return nil, fmt.Errorf("read channel %s: %w", channelID, ErrNoSecretKey)
	}
	plain, err := s.Sealer.Open(tok, channelAAD(channelID))
	if err != nil {
		return nil, fmt.Errorf("decrypt the config of channel %s: %w", channelID, err)
	}
	return plain, nil
}

// openChannel opens the config of a channel as scanned.
func (s *Scripts) openChannel(c *monitors.Channel, err error) (*monitors.Channel, error) {
	if err != nil {
		return c, err
	}
	c.Config, err = s.openConfig(c.ID, c.Config)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (s *Scripts) openChannels(cs []*monitors.Channel, err error) ([]*monitors.Channel, error) {
	if err != nil {
		return nil, err
	}
	for _, c := range cs {
		if _, err := s.openChannel(c, nil); err != nil {
			return nil, err
		}
	}
	return cs, nil
}

// resealPage is how many channels ChannelConfigReseal reads at once.
const resealPage = 200

// needsReseal reports whether a stored config is plain or sealed with
// another key than the current one.
func (s *Scripts) needsReseal(raw []byte, current string) bool {
	tok, ok := sealedToken(raw)
	return !ok || s.Sealer.KeyID(tok) != current
}

// ChannelConfigReseal encrypts, under the Sealer's current key, every
// stored channel config that is plain (written before encryption, or
// without a key) or sealed with another key, and returns how many it
// wrote. Each channel is locked, re-read and written in a transaction of
// its own, so it runs beside a serving Vigil; a config that another
// process sealed meanwhile is left as it is. A config sealed with a key
// the Sealer does not hold stops it with that error: the key file is not
// this database's. Without a Sealer it fails with ErrNoSecretKey.
func (s *Scripts) ChannelConfigReseal(ctx context.Context) (int, error) {
	if s.Sealer == nil {
		return 0, fmt.Errorf("encrypt channel configs: %w", ErrNoSecretKey)
	}
	n, after := 0, ""
	for {
		page, err := All(ctx, s.r(), scanChannel, s.Q.ChannelPage, after, resealPage)
		if err != nil {
			return n, fmt.Errorf("encrypt channel configs: list channels: %w", err)
		}
		for _, c := range page {
			current := s.Sealer.Current()
			if !s.needsReseal(c.Config, current) {
				continue
			}
			wrote, err := s.reseal(ctx, c.ProjectID, c.ID)
			if err != nil {
				return n, err
			}
			if wrote {
				n++
			}
		}
		if len(page) < resealPage {
			return n, nil
		}
		after = page[len(page)-1].ID
	}
}

// reseal seals one channel's config under the current key, if it still
// needs it once locked.
func (s *Scripts) reseal(ctx context.Context, projectID, id string) (bool, error) {
	wrote := false
	err := s.Driver.InTx(ctx, func(tx Tx) error {
		c, err := One(ctx, tx, scanChannel, s.Q.ChannelLock, projectID, id)
		if errors.Is(err, monitors.ErrNotFound) {
			return nil // deleted meanwhile
		}
		if err != nil {
			return fmt.Errorf("encrypt the config of channel %s: %w", id, err)
		}
		if !s.needsReseal(c.Config, s.Sealer.Current()) {
			return nil
		}
		plain, err := s.openConfig(id, c.Config)
		if err != nil {
			return err
		}
		stored, err := s.configArg(id, plain)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, s.Q.ChannelConfigSet, projectID, id, stored); err != nil {
			return fmt.Errorf("encrypt the config of channel %s: %w", id, err)
		}
		wrote = true
		return nil
	})
	return wrote, err
}
