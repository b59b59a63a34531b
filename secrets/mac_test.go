package secrets_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/secrets"
)

func TestSignVerify(t *testing.T) {
	t.Parallel()
	path := newFile(t)
	kr, err := secrets.Load(path)
	require.NoError(t, err)
	msg := []byte("snooze\x00prj\x00mon\x003600\x001773536700")
	sig := kr.Sign("links", msg)
	require.NoError(t, kr.Verify("links", msg, sig))
	require.ErrorIs(t, kr.Verify("other", msg, sig), secrets.ErrBadMAC, "a MAC is worth nothing for another purpose")
	require.ErrorIs(t, kr.Verify("links", append(msg, '0'), sig), secrets.ErrBadMAC, "nor for another message")
	tampered := []byte(sig)
	tampered[len(tampered)-2] ^= 1
	require.ErrorIs(t, kr.Verify("links", msg, string(tampered)), secrets.ErrBadMAC)
	require.ErrorIs(t, kr.Verify("links", msg, "nonsense"), secrets.ErrBadMAC)
	// A MAC has one spelling: every other character in its last place is
	// refused, including those that differ only in the bits base64 pads
	// with and would decode to the same bytes.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	for _, c := range alphabet {
		if byte(c) == sig[len(sig)-1] {
			continue
		}
		respelt := sig[:len(sig)-1] + string(c)
		require.ErrorIs(t, kr.Verify("links", msg, respelt), secrets.ErrBadMAC, respelt)
	}

	// After a rotation the old key still checks while the file holds it,
	// and new MACs are made with the new key; another file's key checks
	// nothing.
	_, err = secrets.AddKey(path)
	require.NoError(t, err)
	require.NoError(t, kr.Verify("links", msg, sig))
	require.NotEqual(t, sig, kr.Sign("links", msg))
	require.NoError(t, kr.Verify("links", msg, kr.Sign("links", msg)))
	other, err := secrets.Load(newFile(t))
	require.NoError(t, err)
	require.Error(t, other.Verify("links", msg, sig))
}
