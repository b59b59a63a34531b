package storetest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/plan"
	"github.com/vigilhq/vigil/secrets"
)

// Sealing opens stores for RunSealing.
type Sealing struct {
	// NewDB makes a fresh database and returns what Open takes to open it.
	NewDB func(t *testing.T) string
	// Open opens a store on db, sealing channel configs with sealer (nil:
	// none). The store is closed when the test ends.
	Open func(t *testing.T, db string, sealer plan.Sealer) monitors.Store
	// RawConfig returns a channel's config column as the database holds
	// it, read with SQL of its own.
	RawConfig func(t *testing.T, s monitors.Store, channelID string) string
}

// resealer is the store method that seals every stored config.
type resealer interface {
	ChannelConfigReseal(ctx context.Context) (int, error)
}

func reseal(t *testing.T, s monitors.Store) int {
	t.Helper()
	n, err := s.(resealer).ChannelConfigReseal(t.Context())
	require.NoError(t, err)
	return n
}

// sealedSecret is what no raw row may contain.
const sealedSecret = "whsec-never-in-the-database"

func secretConfig(url string) json.RawMessage {
	return json.RawMessage(`{"url":"` + url + `","secret":"` + sealedSecret + `","headers":{"Authorization":"Bearer ` + sealedSecret + `-2"}}`)
}

// newKeyFile creates a key file in a temporary directory.
func newKeyFile(t *testing.T) (string, *secrets.Keyring) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "secret.key")
	_, err := secrets.Create(path)
	require.NoError(t, err)
	kr, err := secrets.Load(path)
	require.NoError(t, err)
	return path, kr
}

// RunSealing checks that channel configs are encrypted at rest: that the
// database never holds a secret in plain text, that plain configs of an
// older Vigil are sealed, that a rotation re-encrypts every config under
// the new key, and that a wrong key file is a clear error.
func RunSealing(t *testing.T, c Sealing) {
	ctx := context.Background()
	newChannel := func(t *testing.T, s monitors.Store, prj, name string) *monitors.Channel {
		t.Helper()
		ch, err := s.ChannelCreate(ctx, &monitors.ChannelCreateParams{ID: RandomID("ch_"), ProjectID: prj, Kind: "webhook",
			Name: name, Config: secretConfig("https://hooks.example.com/" + name), Now: T0})
		require.NoError(t, err)
		return ch
	}
	requirePlainConfig := func(t *testing.T, s monitors.Store, ch *monitors.Channel, url string) {
		t.Helper()
		got, err := s.ChannelGet(ctx, ch.ProjectID, ch.ID)
		require.NoError(t, err)
		require.JSONEq(t, string(secretConfig(url)), string(got.Config))
	}
	requireSealed := func(t *testing.T, s monitors.Store, ch *monitors.Channel, keyID string) {
		t.Helper()
		raw := c.RawConfig(t, s, ch.ID)
		require.NotContains(t, raw, sealedSecret)
		require.NotContains(t, raw, "hooks.example.com", "the whole config is sealed, its URL too")
		require.Contains(t, raw, `"$sealed"`)
		require.Contains(t, raw, "v1:"+keyID+":", "sealed with key %s: %s", keyID, raw)
	}

	t.Run("NeverPlain", func(t *testing.T) {
		t.Parallel()
		_, kr := newKeyFile(t)
		s := c.Open(t, c.NewDB(t), kr)
		p := MustProject(t, s)
		ch := newChannel(t, s, p.ID, "ops")
		requireSealed(t, s, ch, kr.Current())
		require.JSONEq(t, string(secretConfig("https://hooks.example.com/ops")), string(ch.Config))
		requirePlainConfig(t, s, ch, "https://hooks.example.com/ops")

		list, err := s.ChannelList(ctx, &monitors.ChannelListParams{ProjectID: p.ID})
		require.NoError(t, err)
		require.Len(t, list, 1)
		require.JSONEq(t, string(secretConfig("https://hooks.example.com/ops")), string(list[0].Config))

		_, err = s.ChannelModify(ctx, &monitors.ChannelModifyParams{ProjectID: p.ID, ID: ch.ID, Fn: func(c *monitors.Channel) error {
			require.JSONEq(t, string(secretConfig("https://hooks.example.com/ops")), string(c.Config), "Fn sees the plain config")
			c.Config = secretConfig("https://hooks.example.com/moved")
			return nil
		}})
		require.NoError(t, err)
		requireSealed(t, s, ch, kr.Current())
		requirePlainConfig(t, s, ch, "https://hooks.example.com/moved")
		require.Equal(t, 0, reseal(t, s), "everything is sealed under the current key already")
	})

	t.Run("PlainConfigsAreSealed", func(t *testing.T) {
		t.Parallel()
		db := c.NewDB(t)
		old := c.Open(t, db, nil) // a Vigil from before encryption
		p := MustProject(t, old)
		chs := []*monitors.Channel{newChannel(t, old, p.ID, "a"), newChannel(t, old, p.ID, "b")}
		require.Contains(t, c.RawConfig(t, old, chs[0].ID), sealedSecret)

		_, kr := newKeyFile(t)
		s := c.Open(t, db, kr)
		requirePlainConfig(t, s, chs[0], "https://hooks.example.com/a") // readable before it is sealed
		require.Equal(t, 2, reseal(t, s))
		for _, ch := range chs {
			requireSealed(t, s, ch, kr.Current())
			requirePlainConfig(t, s, ch, "https://hooks.example.com/"+ch.Name)
		}
		require.Equal(t, 0, reseal(t, s), "a second pass has nothing to do")

		_, err := old.ChannelGet(ctx, p.ID, chs[0].ID)
		require.ErrorIs(t, err, plan.ErrNoSecretKey, "a store without the key cannot read a sealed config")
	})

	t.Run("Rotate", func(t *testing.T) {
		t.Parallel()
		path, kr := newKeyFile(t)
		db := c.NewDB(t)
		s := c.Open(t, db, kr)
		p := MustProject(t, s)
		var chs []*monitors.Channel
		for _, name := range []string{"a", "b", "c"} {
			chs = append(chs, newChannel(t, s, p.ID, name))
		}
		oldID := kr.Current()
		before, err := os.ReadFile(path)
		require.NoError(t, err)

		// The rotation, as "vigil secrets rotate" runs it, while s (a
		// serving replica) keeps its keyring on the same file.
		newID, err := secrets.AddKey(path)
		require.NoError(t, err)
		require.NotEqual(t, oldID, newID)
		rot, err := secrets.Load(path)
		require.NoError(t, err)
		rot.Retain(rot)
		rs := c.Open(t, db, rot)
		require.Equal(t, 3, reseal(t, rs))
		dropped, err := secrets.DropOldKeys(path)
		require.NoError(t, err)
		require.Equal(t, []string{oldID}, dropped)
		require.Equal(t, 0, reseal(t, rs))

		for _, ch := range chs {
			requireSealed(t, s, ch, newID)
			// The replica reloads the file for the key it meets.
			requirePlainConfig(t, s, ch, "https://hooks.example.com/"+ch.Name)
		}
		require.Equal(t, newID, kr.Current(), "the replica seals under the new key")
		d := newChannel(t, s, p.ID, "d")
		requireSealed(t, s, d, newID)

		// The key file from before the rotation opens nothing any more.
		stale := filepath.Join(t.TempDir(), "old.key")
		require.NoError(t, os.WriteFile(stale, before, 0o600))
		staleKR, err := secrets.Load(stale)
		require.NoError(t, err)
		_, err = c.Open(t, db, staleKR).ChannelGet(ctx, p.ID, chs[0].ID)
		require.ErrorIs(t, err, secrets.ErrUnknownKey)
	})

	t.Run("WrongKey", func(t *testing.T) {
		t.Parallel()
		_, kr := newKeyFile(t)
		db := c.NewDB(t)
		s := c.Open(t, db, kr)
		p := MustProject(t, s)
		ch := newChannel(t, s, p.ID, "a")

		// Another database's key file: the error names the key missing.
		_, other := newKeyFile(t)
		os2 := c.Open(t, db, other)
		_, err := os2.ChannelGet(ctx, p.ID, ch.ID)
		require.ErrorIs(t, err, secrets.ErrUnknownKey)
		require.ErrorContains(t, err, kr.Current())
		require.ErrorContains(t, err, ch.ID)
		_, err = os2.(resealer).ChannelConfigReseal(ctx)
		require.ErrorIs(t, err, secrets.ErrUnknownKey, "sealing at start stops at a key it cannot open")
		_, err = os2.ChannelList(ctx, &monitors.ChannelListParams{ProjectID: p.ID})
		require.ErrorIs(t, err, secrets.ErrUnknownKey)

		// A file whose key has the right name but other bytes.
		forged := filepath.Join(t.TempDir(), "forged.key")
		body, err := os.ReadFile(other.Path())
		require.NoError(t, err)
		var lines []string
		for _, l := range strings.Split(string(body), "\n") {
			if l != "" && !strings.HasPrefix(l, "#") {
				l = kr.Current() + " " + strings.Fields(l)[1]
			}
			lines = append(lines, l)
		}
		require.NoError(t, os.WriteFile(forged, []byte(strings.Join(lines, "\n")), 0o600))
		forgedKR, err := secrets.Load(forged)
		require.NoError(t, err)
		_, err = c.Open(t, db, forgedKR).ChannelGet(ctx, p.ID, ch.ID)
		require.ErrorIs(t, err, secrets.ErrWrongKey)
		require.NotContains(t, err.Error(), sealedSecret)
	})
}
