package main

import (
	"time"

	"github.com/vigilhq/vigil/web"
)

// webSettings lists the settings of the dashboard.
func webSettings(c *web.Config) []setting {
	return []setting{
		{"VIGIL_WEB_REFRESH", "web-refresh", "5s", "how often dashboard lists and monitor pages refresh their live parts",
			durationSetting(&c.RefreshInterval, time.Second, 10*time.Minute)},
		{"VIGIL_STATUS_PAGE_TTL", "status-page-ttl", "10s", "how long each replica serves a built public status page before building it again (its Cache-Control max-age too)",
			durationSetting(&c.StatusPageTTL, time.Second, 10*time.Minute)},
	}
}
