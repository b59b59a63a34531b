package notifiers

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// HTTPTimeoutDefault bounds one request of the client from [NewHTTPClient]
// when no other timeout is given.
const HTTPTimeoutDefault = 15 * time.Second

// HTTPClientOptions configures [NewHTTPClient].
type HTTPClientOptions struct {
	// AllowPrivate lets requests reach loopback, private and link-local
	// addresses (VIGIL_ALLOW_PRIVATE_TARGETS). Tests that use httptest set
	// it.
	AllowPrivate bool
	// Timeout bounds a whole request, answer included. Zero means
	// HTTPTimeoutDefault.
	Timeout time.Duration
}

// NewHTTPClient returns the HTTP client that channels use to reach the
// outside world. Unless AllowPrivate is set, its dialer refuses, at connect
// time and after DNS resolution, every address that is loopback, private
// (RFC 1918, fc00::/7), shared (100.64.0.0/10), link-local (which includes
// cloud metadata at 169.254.169.254), unspecified, multicast or broadcast;
// IPv4-mapped and NAT64 addresses are judged by the IPv4 address they
// carry. A refused connection fails with a permanent error that wraps
// [ErrPrivateTarget].
//
// The client never uses a proxy from the environment (a proxy would make the
// connection, and the check, on our behalf) and does not follow redirects: a
// POST that is redirected would lose its body, and a redirect is a
// configuration problem that [ClassifyHTTP] reports as permanent.
func NewHTTPClient(opts HTTPClientOptions) *http.Client {
	dialer := &net.Dialer{
		Timeout:   10 * time.Second,
		KeepAlive: 30 * time.Second,
	}
	if !opts.AllowPrivate {
		dialer.Control = refusePrivate
	}
	transport := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		ResponseHeaderTimeout: 0,
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = HTTPTimeoutDefault
	}
	return &http.Client{
		Transport: transport,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// refusePrivate is a net.Dialer Control function: it runs after the socket
// is created and before connect(2), with the resolved address.
func refusePrivate(network, address string, _ syscall.RawConn) error {
	return CheckTargetAddress(address)
}

// CheckTargetAddress reports whether a "host:port" (or bare IP) that a
// channel is about to connect to is public. It returns nil for a public
// address and otherwise a permanent error that wraps [ErrPrivateTarget] and
// says how to allow it. A host that is not an IP address is refused too: the
// dialer always passes resolved addresses.
func CheckTargetAddress(address string) error {
	host := address
	if h, _, err := net.SplitHostPort(address); err == nil {
		host = h
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return Permanent(&PrivateTargetError{Address: host, Reason: "not an IP address"})
	}
	if reason := privateReason(ip); reason != "" {
		return Permanent(&PrivateTargetError{Address: ip.WithZone("").String(), Reason: reason})
	}
	return nil
}

// PrivateTargetError is a connection refused by [CheckTargetAddress].
// It matches [ErrPrivateTarget] with errors.Is.
type PrivateTargetError struct {
	Address string
	Reason  string // "loopback", "private network", "link-local", ...
}

func (e *PrivateTargetError) Error() string {
	return fmt.Sprintf("target address %s is private (%s); set VIGIL_ALLOW_PRIVATE_TARGETS=true to allow it",
		e.Address, e.Reason)
}

// Is makes errors.Is(err, ErrPrivateTarget) true.
func (e *PrivateTargetError) Is(target error) bool { return target == ErrPrivateTarget }

var (
	sharedAddressSpace = netip.MustParsePrefix("100.64.0.0/10")
	thisNetwork        = netip.MustParsePrefix("0.0.0.0/8")
	broadcast          = netip.MustParseAddr("255.255.255.255")
	nat64              = netip.MustParsePrefix("64:ff9b::/96")
)

// privateReason names why ip is not a public target, or is "" when it is.
func privateReason(ip netip.Addr) string {
	ip = ip.WithZone("").Unmap()
	if nat64.Contains(ip) {
		b := ip.As16()
		if reason := privateReason(netip.AddrFrom4([4]byte(b[12:16]))); reason != "" {
			return "NAT64 of " + reason
		}
	}
	switch {
	case ip.IsLoopback():
		return "loopback"
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsLinkLocalUnicast():
		return "link-local"
	case ip.IsMulticast():
		return "multicast"
	case ip.IsPrivate():
		return "private network"
	case ip.Is4() && sharedAddressSpace.Contains(ip):
		return "shared address space"
	case ip.Is4() && thisNetwork.Contains(ip):
		return "this network"
	case ip == broadcast:
		return "broadcast"
	}
	return ""
}
