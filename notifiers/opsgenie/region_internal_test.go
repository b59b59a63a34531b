package opsgenie

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/notifiers"
)

func TestRegionBaseURL(t *testing.T) {
	t.Parallel()
	for region, want := range map[string]string{"": "https://api.opsgenie.com", "us": "https://api.opsgenie.com", "eu": "https://api.eu.opsgenie.com"} {
		o, err := New(Config{APIKey: "k", Region: region})
		require.NoError(t, err)
		require.Equal(t, want, o.baseURL(), region)
	}
	o, err := New(Config{APIKey: "k", Region: "eu"}, notifiers.WithAPIURL("http://127.0.0.1:9/"))
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:9", o.baseURL())
}
