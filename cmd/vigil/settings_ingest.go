package main

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/vigilhq/vigil/ingest"
)

// ingestSettings lists the settings of the ping endpoints (/ping/...) and the batching writer.
func ingestSettings(c *ingest.Config) []setting {
	return []setting{
		{"VIGIL_PING_BODY_LIMIT", "ping-body-limit", "100KB", "bytes of a ping's body kept (such as 100KB or 1MiB); the rest is cut and the ping flagged", byteSizeSetting(&c.BodyLimit, 1, ingest.BodyHardLimitDefault)},
		{"VIGIL_INGEST_BATCH_SIZE", "ingest-batch-size", strconv.Itoa(ingest.BatchSizeDefault), "most pings written in one transaction (1: one transaction per ping)", intSetting(&c.BatchSize, 1, 10_000)},
		{"VIGIL_INGEST_BATCH_WINDOW", "ingest-batch-window", ingest.BatchWindowDefault.String(), "how long a batch waits for more pings after its first, at most; on SQLite it stops once none has arrived for a sixteenth of it; on PostgreSQL pings queued while a batch was written go at once (0: no waiting)", durationSetting(&c.BatchWindow, 0, time.Second)},
		{"VIGIL_PING_RATE_LIMIT", "ping-rate-limit", "5", "pings per second one monitor key may send on average (0: no limit)", floatSetting(&c.RateLimit, 0, 1e6)},
		{"VIGIL_PING_RATE_BURST", "ping-rate-burst", "50", "pings one monitor key may send at once above the rate", intSetting(&c.RateBurst, 1, 1_000_000)},
		{"VIGIL_PING_FAILURE_LIMIT", "ping-failure-limit", "1", "pings per second one client address may send on average that end in 404 or 400 (-1: no limit)", floatSetting(&c.FailureLimit, -1, 1e6)},
		{"VIGIL_PING_FAILURE_BURST", "ping-failure-burst", "60", "pings ending in 404 or 400 one client address may send at once above that rate", intSetting(&c.FailureBurst, 1, 1_000_000)},
		{"VIGIL_TRUSTED_PROXIES", "trusted-proxies", "", "comma-separated CIDRs (or addresses) of proxies whose X-Forwarded-For is believed", prefixListSetting(&c.TrustedProxies)},
	}
}

// byteSizeSetting parses a size in bytes: a number, or one with a unit
// such as 100KB (1000 bytes a KB) or 1MiB (1024 KiB).
func byteSizeSetting(p *int64, lo, hi int64) func(string) error {
	return func(s string) error {
		v, err := humanize.ParseBytes(s)
		if err != nil || v < uint64(lo) || v > uint64(hi) {
			return fmt.Errorf("%q is not a size (such as 100000, 100KB or 1MiB) between %d and %d bytes", s, lo, hi)
		}
		*p = int64(v)
		return nil
	}
}

func floatSetting(p *float64, lo, hi float64) func(string) error {
	return func(s string) error {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < lo || v > hi || v != v {
			return fmt.Errorf("%q is not a number between %g and %g", s, lo, hi)
		}
		*p = v
		return nil
	}
}

// prefixListSetting parses comma-separated CIDRs; a bare address is a
// prefix of its own.
func prefixListSetting(p *[]netip.Prefix) func(string) error {
	return func(s string) error {
		var out []netip.Prefix
		for _, f := range strings.Split(s, ",") {
			f = strings.TrimSpace(f)
			if f == "" {
				continue
			}
			if pr, err := netip.ParsePrefix(f); err == nil {
				out = append(out, pr.Masked())
				continue
			}
			a, err := netip.ParseAddr(f)
			if err != nil {
				return fmt.Errorf("%q is not a CIDR (such as 10.0.0.0/8) or an IP address", f)
			}
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
		}
		*p = out
		return nil
	}
}
