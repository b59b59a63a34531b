package notifiers

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"syscall"
	"time"
)

// HTTPTimeoutDefault bounds one request of the client from [NewHTTPClient]
// when no other timeout is given.
const HTTPTimeoutDefault = 15 * time.Second

// HTTPClientOptions configures [NewHTTPClient].
type HTTPClientOptions struct {
	// AllowPrivate lets requests reach loopback, private and link-local
	// addresses (VIGIL_ALLOW_PRIVATE_TARGETS), but not cloud metadata
	// addresses unless Allowed lists them exactly. Tests that use
	// httptest set it.
	AllowPrivate bool
	// Allowed lets chosen private targets through while the others stay
	// refused (VIGIL_ALLOWED_TARGETS).
	Allowed AllowedTargets
	// Timeout bounds a whole request, answer included. Zero means
	// HTTPTimeoutDefault.
	Timeout time.Duration
}

// AllowedTargets are the private addresses and host names that channels
// may reach even though private targets are refused.
type AllowedTargets struct {
	// Prefixes are CIDRs; a single address is a prefix of its own length.
	Prefixes []netip.Prefix
	// Hosts are host names, lower case, without a trailing dot. A host
	// listed here may resolve to any address but a cloud metadata one.
	Hosts []string
}

// ParseAllowedTargets parses VIGIL_ALLOWED_TARGETS: comma-separated CIDRs
// (10.1.0.0/16), addresses (10.1.2.3, fd00::5) and host names
// (hooks.internal). Every entry that is none of these is reported.
func ParseAllowedTargets(list string) (AllowedTargets, error) {
	var out AllowedTargets
	var errs []error
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if pr, err := netip.ParsePrefix(f); err == nil {
			if pr.Addr().Is4In6() {
				pr = netip.PrefixFrom(pr.Addr().Unmap(), max(pr.Bits()-96, 0))
			}
			out.Prefixes = append(out.Prefixes, pr.Masked())
			continue
		}
		if a, err := netip.ParseAddr(f); err == nil {
			a = a.WithZone("").Unmap()
			out.Prefixes = append(out.Prefixes, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		host := strings.TrimSuffix(strings.ToLower(f), ".")
		if !validHostName(host) {
			errs = append(errs, fmt.Errorf("%q is not a CIDR (10.0.0.0/8), an IP address or a host name", f))
			continue
		}
		out.Hosts = append(out.Hosts, host)
	}
	return out, errors.Join(errs...)
}

// validHostName reports whether h is a DNS name of letters, digits and
// hyphens in dot-separated labels.
func validHostName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}

// String lists the targets as ParseAllowedTargets reads them.
func (a AllowedTargets) String() string {
	var parts []string
	for _, p := range a.Prefixes {
		parts = append(parts, p.String())
	}
	return strings.Join(append(parts, a.Hosts...), ",")
}

// dialHostKey carries the host name of a dial to the dialer's control
// function, which sees only the resolved address.
type dialHostKey struct{}

// NewHTTPClient returns the HTTP client that channels use to reach the
// outside world. Its dialer judges, at connect time and after DNS
// resolution, every address it is about to connect to (see
// [TargetPolicy.Check]): unless AllowPrivate is set, loopback, private,
// shared, link-local, reserved and other special-purpose addresses are
// refused unless Allowed lets them through, and cloud metadata addresses
// are refused even then unless listed exactly. A refused connection fails
// with a permanent error that wraps [ErrPrivateTarget].
//
// The client never uses a proxy from the environment (a proxy would make the
// connection, and the check, on our behalf) and does not follow redirects: a
// POST that is redirected would lose its body, and a redirect is a
// configuration problem that [ClassifyHTTP] reports as permanent.
func NewHTTPClient(opts HTTPClientOptions) *http.Client {
	policy := TargetPolicy{AllowPrivate: opts.AllowPrivate, Allowed: opts.Allowed}
	dialer := &net.Dialer{
		Timeout:   10 * time.Second,
		KeepAlive: 30 * time.Second,
		ControlContext: func(ctx context.Context, _, address string, _ syscall.RawConn) error {
			host, _ := ctx.Value(dialHostKey{}).(string)
			return policy.Check(host, address)
		},
	}
	transport := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, address string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				host = address
			}
			return dialer.DialContext(context.WithValue(ctx, dialHostKey{}, host), network, address)
		},
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

// TargetPolicy decides which addresses channels may connect to.
type TargetPolicy struct {
	// AllowPrivate lets every address through but cloud metadata ones.
	AllowPrivate bool
	// Allowed lets chosen private addresses and host names through.
	Allowed AllowedTargets
}

// Check reports whether a connection to address ("ip:port" or a bare IP,
// as resolved), made for host (the name in the URL; "" when unknown), is
// allowed. A cloud metadata address is refused unless Allowed lists it as
// a single address; any other address is allowed with AllowPrivate, when
// an Allowed prefix holds it or Allowed lists host, or when it is public.
// A refusal is a permanent error that wraps [ErrPrivateTarget].
func (p TargetPolicy) Check(host, address string) error {
	ipText := address
	if h, _, err := net.SplitHostPort(address); err == nil {
		ipText = h
	}
	ip, err := netip.ParseAddr(ipText)
	if err != nil {
		return Permanent(&PrivateTargetError{Address: ipText, Reason: "not an IP address"})
	}
	ip = ip.WithZone("").Unmap()
	if reason := metadataReason(ip); reason != "" {
		for _, pr := range p.Allowed.Prefixes {
			if pr.IsSingleIP() && pr.Addr() == ip {
				return nil
			}
		}
		return Permanent(&PrivateTargetError{Address: ip.String(), Reason: reason, Metadata: true})
	}
	reason := privateReason(ip)
	if reason == "" || p.AllowPrivate {
		return nil
	}
	for _, pr := range p.Allowed.Prefixes {
		if pr.Contains(ip) {
			return nil
		}
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host != "" && slices.Contains(p.Allowed.Hosts, host) {
		return nil
	}
	return Permanent(&PrivateTargetError{Address: ip.String(), Reason: reason})
}

// CheckTargetAddress reports whether a "host:port" (or bare IP) that a
// channel is about to connect to is public, under the default policy
// (private targets refused, none allowed). It returns nil for a public
// address and otherwise a permanent error that wraps [ErrPrivateTarget] and
// says how to allow it. A host that is not an IP address is refused too: the
// dialer always passes resolved addresses.
func CheckTargetAddress(address string) error {
	return TargetPolicy{}.Check("", address)
}

// PrivateTargetError is a connection refused by [TargetPolicy.Check].
// It matches [ErrPrivateTarget] with errors.Is. Its message does not name
// the address: it is shown to whoever set the channel up, and an internal
// address is none of their business; Address is there for the log.
type PrivateTargetError struct {
	Address string
	Reason  string // "loopback", "private network", "link-local", ...
	// Metadata is set for cloud metadata addresses, which only an exact
	// entry in VIGIL_ALLOWED_TARGETS allows.
	Metadata bool
}

func (e *PrivateTargetError) Error() string {
	if e.Metadata {
		return fmt.Sprintf("the target address is refused (%s); only the exact address in VIGIL_ALLOWED_TARGETS allows it", e.Reason)
	}
	return fmt.Sprintf("the target address is private (%s); set VIGIL_ALLOW_PRIVATE_TARGETS=true or list it in VIGIL_ALLOWED_TARGETS to allow it",
		e.Reason)
}

// Is makes errors.Is(err, ErrPrivateTarget) true.
func (e *PrivateTargetError) Is(target error) bool { return target == ErrPrivateTarget }

var (
	broadcast = netip.MustParseAddr("255.255.255.255")
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	// specialPurpose are the ranges of the IANA special-purpose registries
	// that no public receiver lives in and that the netip predicates do
	// not cover.
	specialPurpose = []struct {
		prefix netip.Prefix
		reason string
	}{
		{netip.MustParsePrefix("100.64.0.0/10"), "shared address space"},
		{netip.MustParsePrefix("0.0.0.0/8"), "this network"},
		{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments"},
		{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
		{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
		{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64"},
		{netip.MustParsePrefix("2002::/16"), "6to4"},
		{netip.MustParsePrefix("fec0::/10"), "site-local"},
	}
	// metadataAddrs are the instance metadata and host services of cloud
	// providers: reaching them from a channel hands out the machine's
	// credentials.
	metadataAddrs = map[netip.Addr]string{
		netip.MustParseAddr("169.254.169.254"): "cloud metadata",   // AWS, GCP, Azure, OCI, DigitalOcean, ...
		netip.MustParseAddr("169.254.170.2"):   "cloud metadata",   // AWS ECS task metadata
		netip.MustParseAddr("169.254.169.253"): "cloud DNS",        // AWS DNS resolver
		netip.MustParseAddr("168.63.129.16"):   "cloud host agent", // Azure WireServer
		netip.MustParseAddr("100.100.100.200"): "cloud metadata",   // Alibaba Cloud
		netip.MustParseAddr("192.0.0.192"):     "cloud metadata",   // Oracle Cloud (classic)
		netip.MustParseAddr("fd00:ec2::254"):   "cloud metadata",   // AWS over IPv6
		netip.MustParseAddr("fd00:ec2::253"):   "cloud DNS",        // AWS DNS over IPv6
	}
)

// metadataReason names why ip is a cloud metadata address, or is "".
// A NAT64 form is judged by the IPv4 address it carries.
func metadataReason(ip netip.Addr) string {
	if nat64.Contains(ip) {
		b := ip.As16()
		ip = netip.AddrFrom4([4]byte(b[12:16]))
	}
	return metadataAddrs[ip]
}

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
	case ip == broadcast:
		return "broadcast"
	}
	for _, sp := range specialPurpose {
		if sp.prefix.Contains(ip) {
			return sp.reason
		}
	}
	return ""
}
