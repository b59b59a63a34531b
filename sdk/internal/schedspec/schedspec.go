// Package schedspec turns the schedule strings of cron libraries into the
// schedules that monitors declare.
package schedspec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vigilhq/vigil/sdk"
)

// Parse describes a robfig/cron style spec, declared in the robfig dialect: an optional "CRON_TZ=Zone " or
// "TZ=Zone " prefix, then 5 or 6 fields, a descriptor such as "@daily", or
// "@every 5m". loc is the scheduler's own time zone, used when the spec names
// none. The spec's validity is the cron library's business; Parse only
// refuses what it cannot describe.
func Parse(spec string, loc *time.Location) (*sdk.Schedule, error) {
	spec = strings.TrimSpace(spec)
	tz := ""
	if strings.HasPrefix(spec, "CRON_TZ=") || strings.HasPrefix(spec, "TZ=") {
		first, rest, _ := strings.Cut(spec, " ")
		_, tz, _ = strings.Cut(first, "=")
		spec = strings.TrimSpace(rest)
	}
	if every, ok := strings.CutPrefix(spec, "@every "); ok {
		d, err := time.ParseDuration(strings.TrimSpace(every))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("describe schedule %q: bad interval", spec)
		}
		return sdk.Every(d), nil
	}
	if spec == "" {
		return nil, fmt.Errorf("describe schedule: empty spec")
	}
	if tz == "" {
		tz = ZoneName(loc)
	}
	sched := sdk.Cron(spec, tz)
	sched.Dialect = "robfig" // fire times as robfig/cron computes them, DST included
	return sched, nil
}

// ZoneName is the IANA name of loc, "" for UTC or nil. For time.Local it is
// found from $TZ or the /etc/localtime link, and is "" when neither names
// one.
func ZoneName(loc *time.Location) string {
	if loc == nil || loc == time.UTC {
		return ""
	}
	name := loc.String()
	if name != "Local" {
		if name == "UTC" {
			return ""
		}
		return name
	}
	if tz := strings.TrimPrefix(os.Getenv("TZ"), ":"); tz != "" {
		if _, err := time.LoadLocation(tz); err == nil && tz != "UTC" {
			return tz
		}
		return ""
	}
	target, err := filepath.EvalSymlinks("/etc/localtime")
	if err != nil {
		return ""
	}
	if _, zone, ok := strings.Cut(target, "zoneinfo/"); ok && zone != "UTC" && zone != "Etc/UTC" {
		return zone
	}
	return ""
}
