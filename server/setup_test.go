package server_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSetupURL: a server started on a database without accounts has a
// setup URL that opens the first-account form; the front page does not.
func TestSetupURL(t *testing.T) {
	t.Parallel()
	srv, base, _ := startServer(t)
	require.NotEmpty(t, srv.SetupToken)
	require.Equal(t, base+"/setup?token="+srv.SetupToken, srv.SetupURL())
	resp, err := http.Get(srv.SetupURL())
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	require.Contains(t, string(body), "Create the first account")
}
