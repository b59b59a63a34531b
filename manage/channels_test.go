package manage_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/manage"
)

func TestChannelConfig(t *testing.T) {
	t.Parallel()
	stored := json.RawMessage(`{"bot_token":"123456:ABCDEFghijklmnopqrstuvwxyz","chat_id":42}`)
	merged, forgotten, err := manage.ChannelConfig("telegram", stored, json.RawMessage(`{"chat_id":"42"}`))
	require.NoError(t, err)
	require.JSONEq(t, `{"bot_token":"123456:ABCDEFghijklmnopqrstuvwxyz","chat_id":"42"}`, string(merged), "the same chat keeps its token")
	require.Empty(t, forgotten)

	// Another chat without the token again: the token is forgotten, and
	// the error says why it is missing.
	_, _, err = manage.ChannelConfig("telegram", stored, json.RawMessage(`{"chat_id":777}`))
	var ce *manage.ConfigError
	require.True(t, errors.As(err, &ce), "%v", err)
	require.Equal(t, []string{"bot_token"}, ce.Forgotten)
	require.Contains(t, ce.Error(), "bot_token: ")
	require.Contains(t, ce.Error(), "(the stored bot_token was forgotten because chat_id changed: give it again to keep it)")
	require.NotContains(t, ce.Error(), "123456:ABCDEFghijklmnopqrstuvwxyz")

	merged, forgotten, err = manage.ChannelConfig("telegram", stored, json.RawMessage(`{"chat_id":777,"bot_token":"999999:ZYXWVUtsrqponmlkjihgfedcba"}`))
	require.NoError(t, err)
	require.JSONEq(t, `{"bot_token":"999999:ZYXWVUtsrqponmlkjihgfedcba","chat_id":777}`, string(merged))
	require.Empty(t, forgotten)

	_, _, err = manage.ChannelConfig("telegram", stored, json.RawMessage(`[1]`))
	require.True(t, errors.As(err, &ce))
	require.EqualError(t, err, "config: must be a JSON object")
	_, _, err = manage.ChannelConfig("sms", stored, json.RawMessage(`{}`))
	require.Error(t, err)
}
