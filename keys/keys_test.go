package keys_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/keys"
)

func TestAPIKey(t *testing.T) {
	t.Parallel()
	k1, p1, h1 := keys.NewAPIKey()
	k2, _, h2 := keys.NewAPIKey()
	require.NotEqual(t, k1, k2)
	require.True(t, strings.HasPrefix(k1, "vk_"))
	require.True(t, strings.HasPrefix(k1, p1))
	require.GreaterOrEqual(t, len(k1), 40)
	require.Equal(t, h1, keys.HashAPIKey(k1))
	require.Equal(t, h1, keys.HashAPIKey(" "+k1+"\n"), "surrounding space is not part of a key")
	require.NotEqual(t, h1, h2)
	require.NotContains(t, h1, k1)
}

func TestPingKeys(t *testing.T) {
	t.Parallel()
	k := keys.NewPingKey()
	require.True(t, keys.IsPingKey(k))
	require.Equal(t, byte('4'), k[14], "version 4")
	require.False(t, keys.IsPingKey("not-a-key"))
	require.False(t, keys.IsPingKey(strings.Repeat("x", 36)))
	p := keys.NewProjectPingKey()
	require.Len(t, p, 22) // 128 bits, base64url
	require.NotEqual(t, p, keys.NewProjectPingKey())
}
