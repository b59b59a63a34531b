package notifiers_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/notifiers"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
)

// post sends one request the way the kinds do and returns the outcome.
func post(t *testing.T, client *http.Client, target string) error {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, target, strings.NewReader("{}"))
	require.NoError(t, err)
	return notifiers.SendHTTP(client, req)
}

func TestHTTPClientRefusesLoopbackAtConnectTime(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, nil)
	_, port, err := net.SplitHostPort(recv.Listener.Addr().String())
	require.NoError(t, err)

	v6 := httptest.NewUnstartedServer(http.NotFoundHandler())
	v6Listener, v6Err := net.Listen("tcp6", "[::1]:0")
	if v6Err == nil {
		v6.Listener = v6Listener
		v6.Start()
		t.Cleanup(v6.Close)
	}

	client := notifiers.NewHTTPClient(notifiers.HTTPClientOptions{})
	t.Cleanup(client.CloseIdleConnections)

	targets := map[string]string{
		"127.0.0.1": "http://127.0.0.1:" + port + "/hook",
		// A name that resolves to loopback: the check runs on the resolved
		// address, not on the name.
		"localhost": "http://localhost:" + port + "/hook",
	}
	if v6Err == nil {
		targets["::1"] = v6.URL + "/hook"
	}
	for name, target := range targets {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			err := post(t, client, target)
			require.Error(t, err)
			require.True(t, notifiers.IsPermanent(err), "refusal is permanent: %v", err)
			require.ErrorIs(t, err, notifiers.ErrPrivateTarget)
			require.Contains(t, err.Error(), "is private (loopback); set VIGIL_ALLOW_PRIVATE_TARGETS=true to allow it")
			require.NotContains(t, err.Error(), "/hook", "no URL path in the error")
		})
	}
	require.Empty(t, recv.Requests(), "no request reached the server")
}

func TestHTTPClientAllowPrivate(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, nil)
	client := notifiers.NewHTTPClient(notifiers.HTTPClientOptions{AllowPrivate: true})
	t.Cleanup(client.CloseIdleConnections)
	require.NoError(t, post(t, client, recv.URL+"/hook"))
	_, port, _ := net.SplitHostPort(recv.Listener.Addr().String())
	require.NoError(t, post(t, client, "http://localhost:"+port+"/hook"))
	require.Len(t, recv.Requests(), 2)
}

func TestHTTPClientIgnoresProxyAndRedirects(t *testing.T) {
	t.Parallel()
	client := notifiers.NewHTTPClient(notifiers.HTTPClientOptions{AllowPrivate: true})
	t.Cleanup(client.CloseIdleConnections)
	transport, ok := client.Transport.(*http.Transport)
	require.True(t, ok)
	require.Nil(t, transport.Proxy, "a proxy from the environment would bypass the address check")
	require.Equal(t, notifiers.HTTPTimeoutDefault, client.Timeout)

	recv := notifiertest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere?token=abc", http.StatusTemporaryRedirect)
	})
	err := post(t, client, recv.URL+"/hook")
	require.True(t, notifiers.IsPermanent(err), "a redirect is a configuration problem: %v", err)
	require.Contains(t, err.Error(), "HTTP 307")
	require.NotContains(t, err.Error(), "token=abc")
	require.Len(t, recv.Requests(), 1, "the redirect was not followed")
}

func TestCheckTargetAddress(t *testing.T) {
	t.Parallel()
	// Pure checks: none of these addresses is ever dialled.
	refused := map[string]string{
		"127.0.0.1:443":           "loopback",
		"127.8.9.10:80":           "loopback",
		"[::1]:443":               "loopback",
		"10.0.0.1:443":            "private network",
		"172.16.5.4:443":          "private network",
		"192.168.1.1:443":         "private network",
		"[fd00::2]:443":           "private network",
		"169.254.169.254:80":      "link-local",
		"[fe80::1%eth0]:80":       "link-local",
		"100.64.0.1:443":          "shared address space",
		"100.127.255.254:443":     "shared address space",
		"0.0.0.0:443":             "unspecified",
		"[::]:443":                "unspecified",
		"0.1.2.3:443":             "this network",
		"224.0.0.1:443":           "multicast",
		"[ff02::1]:443":           "multicast",
		"255.255.255.255:443":     "broadcast",
		"[::ffff:127.0.0.1]:443":  "loopback",
		"[::ffff:10.1.2.3]:443":   "private network",
		"[64:ff9b::a9fe:a9fe]:80": "NAT64 of link-local",
		"example.com:443":         "not an IP address",
	}
	for addr, reason := range refused {
		err := notifiers.CheckTargetAddress(addr)
		require.Error(t, err, addr)
		require.True(t, notifiers.IsPermanent(err), addr)
		require.ErrorIs(t, err, notifiers.ErrPrivateTarget, addr)
		var pe *notifiers.PrivateTargetError
		require.True(t, errors.As(err, &pe), addr)
		require.Equal(t, reason, pe.Reason, addr)
	}
	require.Equal(t,
		"target address 10.0.0.1 is private (private network); set VIGIL_ALLOW_PRIVATE_TARGETS=true to allow it",
		notifiers.CheckTargetAddress("10.0.0.1:443").Error())
	require.Equal(t,
		"target address 169.254.169.254 is private (link-local); set VIGIL_ALLOW_PRIVATE_TARGETS=true to allow it",
		notifiers.CheckTargetAddress("169.254.169.254:80").Error())

	for _, addr := range []string{"1.1.1.1:443", "8.8.8.8:53", "100.128.0.1:443", "172.32.0.1:443", "[2606:4700:4700::1111]:443", "[64:ff9b::808:808]:443"} {
		require.NoError(t, notifiers.CheckTargetAddress(addr), addr)
	}
}
