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
			require.Contains(t, err.Error(), "is private (loopback); set VIGIL_ALLOW_PRIVATE_TARGETS=true or list it in VIGIL_ALLOWED_TARGETS to allow it")
			require.NotContains(t, err.Error(), "127.0.0.1", "no address in the error")
			require.NotContains(t, err.Error(), "::1", "no address in the error")
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
		"169.254.169.254:80":      "cloud metadata",
		"169.254.170.2:80":        "cloud metadata",
		"168.63.129.16:80":        "cloud host agent",
		"100.100.100.200:80":      "cloud metadata",
		"[fd00:ec2::254]:80":      "cloud metadata",
		"[64:ff9b::a9fe:a9fe]:80": "cloud metadata",
		"169.254.1.1:80":          "link-local",
		"192.0.0.8:443":           "IETF protocol assignments",
		"198.18.0.1:443":          "benchmarking",
		"198.19.255.254:443":      "benchmarking",
		"240.0.0.1:443":           "reserved",
		"254.1.2.3:443":           "reserved",
		"[64:ff9b:1::a00:1]:443":  "local-use NAT64",
		"[2002:c0a8:101::1]:443":  "6to4",
		"[fec0::1]:443":           "site-local",
		"[64:ff9b::a00:1]:80":     "NAT64 of private network",
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
		"the target address is private (private network); set VIGIL_ALLOW_PRIVATE_TARGETS=true or list it in VIGIL_ALLOWED_TARGETS to allow it",
		notifiers.CheckTargetAddress("10.0.0.1:443").Error())
	require.Equal(t,
		"the target address is refused (cloud metadata); only the exact address in VIGIL_ALLOWED_TARGETS allows it",
		notifiers.CheckTargetAddress("169.254.169.254:80").Error())

	for _, addr := range []string{"1.1.1.1:443", "8.8.8.8:53", "100.128.0.1:443", "172.32.0.1:443", "[2606:4700:4700::1111]:443", "[64:ff9b::808:808]:443"} {
		require.NoError(t, notifiers.CheckTargetAddress(addr), addr)
	}
}

func TestTargetPolicy(t *testing.T) {
	t.Parallel()
	allowed, err := notifiers.ParseAllowedTargets(" 10.20.0.0/16, 192.168.7.7 ,Hooks.Internal., fd00:1::/32, 169.254.0.0/16")
	require.NoError(t, err)
	require.Equal(t, "10.20.0.0/16,192.168.7.7/32,fd00:1::/32,169.254.0.0/16,hooks.internal", allowed.String())

	listed := notifiers.TargetPolicy{Allowed: allowed}
	open := notifiers.TargetPolicy{AllowPrivate: true}
	exact, err := notifiers.ParseAllowedTargets("169.254.169.254,fd00:ec2::254")
	require.NoError(t, err)
	metadataListed := notifiers.TargetPolicy{Allowed: exact}

	cases := []struct {
		policy  notifiers.TargetPolicy
		host    string
		address string
		ok      bool
	}{
		{listed, "", "10.20.3.4:443", true},
		{listed, "", "10.21.3.4:443", false},
		{listed, "", "192.168.7.7:80", true},
		{listed, "", "192.168.7.8:80", false},
		{listed, "", "[fd00:1::5]:80", true},
		{listed, "", "[::ffff:10.20.0.1]:80", true},
		{listed, "hooks.internal", "10.99.0.1:443", true},
		{listed, "HOOKS.internal.", "10.99.0.1:443", true},
		{listed, "other.internal", "10.99.0.1:443", false},
		{listed, "", "1.1.1.1:443", true},
		// A range that holds a metadata address does not open it, nor
		// does a listed name that resolves to it, nor the all-or-nothing
		// switch; only the exact address does.
		{listed, "", "169.254.10.10:80", true},
		{listed, "", "169.254.169.254:80", false},
		{listed, "hooks.internal", "169.254.169.254:80", false},
		{open, "", "10.0.0.1:443", true},
		{open, "", "127.0.0.1:443", true},
		{open, "", "169.254.169.254:80", false},
		{open, "", "[fd00:ec2::254]:80", false},
		{open, "", "[64:ff9b::a9fe:a9fe]:80", false},
		{metadataListed, "", "169.254.169.254:80", true},
		{metadataListed, "", "[fd00:ec2::254]:80", true},
		{metadataListed, "", "169.254.170.2:80", false},
		{metadataListed, "", "10.0.0.1:443", false},
	}
	for _, c := range cases {
		err := c.policy.Check(c.host, c.address)
		if c.ok {
			require.NoError(t, err, "%s via %q", c.address, c.host)
			continue
		}
		require.ErrorIs(t, err, notifiers.ErrPrivateTarget, "%s via %q", c.address, c.host)
		require.True(t, notifiers.IsPermanent(err))
	}

	_, err = notifiers.ParseAllowedTargets("10.0.0.0/8,not a host,-bad.example,300.1.2.3/8")
	require.EqualError(t, err, `"not a host" is not a CIDR (10.0.0.0/8), an IP address or a host name
"-bad.example" is not a CIDR (10.0.0.0/8), an IP address or a host name
"300.1.2.3/8" is not a CIDR (10.0.0.0/8), an IP address or a host name`)
}

// TestHTTPClientAllowedHost dials a listed host name that resolves to
// loopback, while another name for the same address stays refused.
func TestHTTPClientAllowedHost(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, nil)
	_, port, _ := net.SplitHostPort(recv.Listener.Addr().String())
	allowed, err := notifiers.ParseAllowedTargets("localhost")
	require.NoError(t, err)
	client := notifiers.NewHTTPClient(notifiers.HTTPClientOptions{Allowed: allowed})
	t.Cleanup(client.CloseIdleConnections)
	require.NoError(t, post(t, client, "http://localhost:"+port+"/hook"))
	err = post(t, client, "http://127.0.0.1:"+port+"/hook")
	require.ErrorIs(t, err, notifiers.ErrPrivateTarget)
	require.Len(t, recv.Requests(), 1)
}

func TestRedactAddresses(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"dial tcp 10.1.2.3:443: connect: connection refused":   "dial tcp [address]: connect: connection refused",
		"dial tcp [fd00::1]:80: i/o timeout":                   "dial tcp [address]: i/o timeout",
		"lookup hooks.internal on 127.0.0.53:53: no such host": "lookup hooks.internal on [address]: no such host",
		"from fe80::1%eth0 and ::1":                            "from [address] and [address]",
		"at 12:05 UTC, HTTP 1.1, v1.2.3":                       "at 12:05 UTC, HTTP 1.1, v1.2.3",
	}
	for in, want := range cases {
		require.Equal(t, want, notifiers.RedactAddresses(in), in)
	}
}
