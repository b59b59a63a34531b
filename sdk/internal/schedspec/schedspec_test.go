package schedspec_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/sdk"
	"github.com/vigilhq/vigil/sdk/internal/schedspec"
)

func TestParse(t *testing.T) {
	t.Parallel()
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	robfig := func(expr, tz string) *sdk.Schedule {
		s := sdk.Cron(expr, tz)
		s.Dialect = "robfig" // as robfig/cron reads it
		return s
	}
	cases := []struct {
		spec string
		loc  *time.Location
		want *sdk.Schedule
	}{
		{"0 2 * * *", time.UTC, robfig("0 2 * * *", "")},
		{"0 2 * * *", berlin, robfig("0 2 * * *", "Europe/Berlin")},
		{"CRON_TZ=America/New_York 30 2 * * *", berlin, robfig("30 2 * * *", "America/New_York")},
		{"TZ=Asia/Tokyo 0 0 9 * * 1-5", nil, robfig("0 0 9 * * 1-5", "Asia/Tokyo")},
		{"@hourly", time.UTC, robfig("@hourly", "")},
		{"@every 90s", berlin, sdk.Every(90 * time.Second)},
		{"@every 1500ms", nil, sdk.Every(2 * time.Second)},
	}
	for _, c := range cases {
		got, err := schedspec.Parse(c.spec, c.loc)
		require.NoError(t, err, c.spec)
		require.Equal(t, c.want, got, c.spec)
	}
	for _, bad := range []string{"", "@every soon", "@every -5m", "CRON_TZ=Europe/Berlin"} {
		_, err := schedspec.Parse(bad, nil)
		require.Error(t, err, bad)
	}
}

func TestZoneName(t *testing.T) {
	t.Parallel()
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	require.Equal(t, "Europe/Berlin", schedspec.ZoneName(berlin))
	require.Equal(t, "", schedspec.ZoneName(time.UTC))
	require.Equal(t, "", schedspec.ZoneName(nil))
}
