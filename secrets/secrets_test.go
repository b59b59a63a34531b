package secrets_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/secrets"
)

func newFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "secret.key")
	_, err := secrets.Create(path)
	require.NoError(t, err)
	return path
}

func requireMode(t *testing.T, path string) {
	t.Helper()
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
}

func TestSealOpen(t *testing.T) {
	t.Parallel()
	path := newFile(t)
	requireMode(t, path)
	kr, err := secrets.Load(path)
	require.NoError(t, err)
	a, err := kr.Seal([]byte("hello"), []byte("ch_1"))
	require.NoError(t, err)
	b, err := kr.Seal([]byte("hello"), []byte("ch_1"))
	require.NoError(t, err)
	require.NotEqual(t, a, b, "a fresh nonce each time")
	require.Equal(t, kr.Current(), secrets.KeyID(a))
	require.True(t, strings.HasPrefix(a, "v1:"+kr.Current()+":"))
	got, err := kr.Open(a, []byte("ch_1"))
	require.NoError(t, err)
	require.Equal(t, "hello", string(got))

	_, err = kr.Open(a, []byte("ch_2"))
	require.ErrorIs(t, err, secrets.ErrWrongKey, "bound to its record")
	_, err = kr.Open(a[:len(a)-2]+"AA", []byte("ch_1"))
	require.ErrorIs(t, err, secrets.ErrWrongKey, "tampered")
	_, err = kr.Open("v1:knope:AAAA", nil)
	require.ErrorIs(t, err, secrets.ErrUnknownKey)
	require.ErrorContains(t, err, "knope")
	_, err = kr.Open("plain text", nil)
	require.Error(t, err)
	require.Equal(t, "", secrets.KeyID("plain text"))
}

func TestRotateFile(t *testing.T) {
	t.Parallel()
	path := newFile(t)
	kr, err := secrets.Load(path)
	require.NoError(t, err)
	old := kr.Current()
	sealed, err := kr.Seal([]byte("x"), nil)
	require.NoError(t, err)

	id, err := secrets.AddKey(path)
	require.NoError(t, err)
	requireMode(t, path)
	require.Equal(t, id, kr.Current(), "the ring follows its file")
	got, err := kr.Open(sealed, nil)
	require.NoError(t, err, "old keys still open")
	require.Equal(t, "x", string(got))

	keep, err := secrets.Load(path)
	require.NoError(t, err)
	keep.Retain(keep)
	dropped, err := secrets.DropOldKeys(path)
	require.NoError(t, err)
	require.Equal(t, []string{old}, dropped)
	requireMode(t, path)
	require.Equal(t, id, kr.Current()) // reloads the file
	_, err = kr.Open(sealed, nil)
	require.ErrorIs(t, err, secrets.ErrUnknownKey, "the file no longer holds the old key")
	_, err = keep.Open(sealed, nil)
	require.NoError(t, err, "a retained key still opens")
	dropped, err = secrets.DropOldKeys(path)
	require.NoError(t, err)
	require.Empty(t, dropped)
}

func TestFileErrors(t *testing.T) {
	t.Parallel()
	path := newFile(t)
	_, err := secrets.Create(path)
	require.Error(t, err, "never overwrites a key file")
	dir := t.TempDir()
	for body, want := range map[string]string{
		"":                                     "holds no key",
		"# only a comment\n":                   "holds no key",
		"k1\n":                                 "line 1: want a key ID",
		"K! AAAA\n":                            "key ID",
		"k1 not-base64!\n":                     "not standard base64",
		"k1 AAAA\n":                            "is 3 bytes, not 32",
		"k1 " + key32 + "\nk1 " + key32 + "\n": "appears twice",
	} {
		f := filepath.Join(dir, "f.key")
		require.NoError(t, os.WriteFile(f, []byte(body), 0o600))
		_, err := secrets.Load(f)
		require.ErrorContains(t, err, want, "%q", body)
		require.NotContains(t, err.Error(), key32, "a key never appears in an error")
	}
	_, err = secrets.Load(filepath.Join(dir, "missing.key"))
	require.Error(t, err)
}

const key32 = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
