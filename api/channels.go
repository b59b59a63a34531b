package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/manage"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/notifiers/kinds"
)

// channelJSON is the JSON form of c, without its secrets.
func channelJSON(c *monitors.Channel) Channel {
	return Channel{ID: c.ID, Kind: c.Kind, Name: c.Name, Config: kinds.Redact(c.Kind, c.Config),
		IsDefault: c.IsDefault, NotifyLate: c.NotifyLate, GroupSeconds: c.GroupSeconds, Report: string(c.Report),
		CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC()}
}

// channelJSONFor is channelJSON for the request's key: a read-only key
// sees no URL but its scheme and host, since the path or query of a
// webhook URL is often a credential of its receiver.
func channelJSONFor(rq *request, c *monitors.Channel) Channel {
	out := channelJSON(c)
	if rq.key.ReadOnly {
		out.Config = kinds.RedactURLs(out.Config)
	}
	return out
}

// configError names the config key of a kinds validation error
// ("url: must be ...") as config.url.
func configError(err error) error {
	msg := err.Error()
	if key, rest, ok := strings.Cut(msg, ": "); ok && !strings.ContainsAny(key, " \t") {
		if key == "config" {
			return invalidf("config", "%s", rest)
		}
		return invalidf("config."+key, "%s", rest)
	}
	return invalidf("config", "%s", msg)
}

// checkChannelName checks a channel's name early, so that its error comes
// before any of the config's; the service checks it again.
func checkChannelName(name string) error {
	return (&monitors.Channel{Name: strings.TrimSpace(name)}).Validate()
}

// checkReport checks a channel's report field early; "" is not a value
// to send (leave the field out, or null it in a PATCH).
func checkReport(p monitors.ReportPeriod) error {
	if p == monitors.ReportNone {
		return invalidf("report", `must be "weekly" or "monthly" (leave it out for no report)`)
	}
	return monitors.ValidateReportPeriod(p)
}

// listChannels answers GET /api/v1/channels.
func (h *Handler) listChannels(c echo.Context, rq *request) error {
	limit, offset, err := page(c, PageSizeMax)
	if err != nil {
		return err
	}
	chs, err := h.store.ChannelList(c.Request().Context(), &monitors.ChannelListParams{
		ProjectID: rq.key.ProjectID, Limit: limit + 1, Offset: offset})
	if err != nil {
		return err
	}
	out := ChannelList{Channels: make([]Channel, 0, min(len(chs), limit))}
	for _, ch := range chs[:min(len(chs), limit)] {
		out.Channels = append(out.Channels, channelJSONFor(rq, ch))
	}
	out.Next = nextLink(c, len(chs) > limit, map[string]string{"limit": itoa(limit), "offset": itoa(offset + limit)})
	return c.JSON(http.StatusOK, out)
}

// getChannel answers GET /api/v1/channels/{id}.
func (h *Handler) getChannel(c echo.Context, rq *request) error {
	id := pathParam(c, "id")
	ch, err := h.store.ChannelGet(c.Request().Context(), rq.key.ProjectID, id)
	if errors.Is(err, monitors.ErrNotFound) {
		return notFound("channel", id)
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, channelJSONFor(rq, ch))
}

// createChannel answers POST /api/v1/channels.
func (h *Handler) createChannel(c echo.Context, rq *request) error {
	var in ChannelCreate
	obj, err := h.decodeBody(c, &in, readOnlyFields(Channel{}, ChannelCreate{}))
	if err != nil {
		return err
	}
	for _, name := range sortedKeys(obj) {
		if obj.isNull(name) {
			return invalidf(name, "must not be null")
		}
	}
	if in.Kind == nil {
		return invalidf("kind", "is required (one of %s)", strings.Join(kinds.Names(), ", "))
	}
	kind, err := kinds.Lookup(*in.Kind)
	if err != nil {
		return invalidf("kind", "%q is not one of %s", *in.Kind, strings.Join(kinds.Names(), ", "))
	}
	if in.Name == nil {
		return invalidf("name", "is required")
	}
	if err := checkChannelName(*in.Name); err != nil {
		return err
	}
	var report monitors.ReportPeriod
	if in.Report != nil {
		report = monitors.ReportPeriod(*in.Report)
		if err := checkReport(report); err != nil {
			return err
		}
	}
	if len(in.Config) == 0 {
		return invalidf("config", "is required: the %s config (keys: %s)", kind.Name(), strings.Join(kind.Keys(), ", "))
	}
	if err := kind.Validate(in.Config); err != nil {
		return configError(err)
	}
	config, err := compactJSON(in.Config)
	if err != nil {
		return err
	}
	ch, err := h.manage.ChannelCreate(c.Request().Context(), &monitors.ChannelCreateParams{
		ID: keys.NewID(), ProjectID: rq.key.ProjectID, Kind: kind.Name(), Name: strings.TrimSpace(*in.Name),
		Config: config, IsDefault: in.IsDefault != nil && *in.IsDefault, NotifyLate: in.NotifyLate != nil && *in.NotifyLate,
		GroupSeconds: in.GroupSeconds, Report: report, Now: h.now()})
	if errors.Is(err, monitors.ErrConflict) {
		return conflictf("name", "a channel named %q exists in this project", strings.TrimSpace(*in.Name))
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, channelJSON(ch))
}

// patchChannel answers PATCH /api/v1/channels/{id}. A config replaces the
// stored one, but a secret it leaves out keeps its stored value, so that a
// client that read the channel (without secrets) can send its config back;
// unless the config sends somewhere else, when the secrets it leaves out
// are forgotten and listed in secrets_forgotten (see kinds.KeepSecrets).
func (h *Handler) patchChannel(c echo.Context, rq *request) error {
	id := pathParam(c, "id")
	var in ChannelUpdate
	obj, err := h.decodeBody(c, &in, readOnlyFields(Channel{}, ChannelUpdate{}))
	if err != nil {
		return err
	}
	stopReports := obj.isNull("report")
	for _, name := range sortedKeys(obj) {
		if obj.isNull(name) && name != "report" {
			return invalidf(name, "must not be null")
		}
	}
	if in.Name != nil {
		if err := checkChannelName(*in.Name); err != nil {
			return err
		}
	}
	if in.Report != nil {
		if err := checkReport(monitors.ReportPeriod(*in.Report)); err != nil {
			return err
		}
	}
	now := h.now()
	var forgotten []string
	ch, err := h.manage.ChannelModify(c.Request().Context(), &monitors.ChannelModifyParams{
		ProjectID: rq.key.ProjectID, ID: id,
		Fn: func(ch *monitors.Channel) error {
			old := *ch
			if in.Name != nil {
				ch.Name = strings.TrimSpace(*in.Name)
			}
			if in.IsDefault != nil {
				ch.IsDefault = *in.IsDefault
			}
			if in.NotifyLate != nil {
				ch.NotifyLate = *in.NotifyLate
			}
			if in.GroupSeconds != nil {
				ch.GroupSeconds = *in.GroupSeconds
			}
			switch {
			case stopReports:
				ch.Report = monitors.ReportNone
			case in.Report != nil:
				ch.Report = monitors.ReportPeriod(*in.Report)
			}
			if len(in.Config) > 0 {
				merged, dropped, err := manage.ChannelConfig(ch.Kind, ch.Config, in.Config)
				var ce *manage.ConfigError
				if errors.As(err, &ce) {
					return configError(ce)
				}
				if err != nil {
					return err
				}
				forgotten = dropped
				if ch.Config, err = compactJSON(merged); err != nil {
					return err
				}
			}
			if ch.Name != old.Name || ch.IsDefault != old.IsDefault || ch.NotifyLate != old.NotifyLate ||
				ch.GroupSeconds != old.GroupSeconds || ch.Report != old.Report || !jsonEqual(ch.Config, old.Config) {
				ch.UpdatedAt = now
			}
			return nil
		},
	})
	if errors.Is(err, monitors.ErrNotFound) {
		return notFound("channel", id)
	}
	if errors.Is(err, monitors.ErrConflict) && in.Name != nil {
		return conflictf("name", "a channel named %q exists in this project", strings.TrimSpace(*in.Name))
	}
	if err != nil {
		return err
	}
	out := channelJSON(ch)
	out.SecretsForgotten = forgotten
	return c.JSON(http.StatusOK, out)
}

// deleteChannel answers DELETE /api/v1/channels/{id}. A channel that
// monitors name is not deleted (409, naming them), so that no monitor
// loses its alerts without a person deciding it.
func (h *Handler) deleteChannel(c echo.Context, rq *request) error {
	id := pathParam(c, "id")
	err := h.store.ChannelDelete(c.Request().Context(), rq.key.ProjectID, id)
	if errors.Is(err, monitors.ErrNotFound) {
		return notFound("channel", id)
	}
	if err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// testChannel answers POST /api/v1/channels/{id}/test.
func (h *Handler) testChannel(c echo.Context, rq *request) error {
	id := pathParam(c, "id")
	ch, err := h.store.ChannelGet(c.Request().Context(), rq.key.ProjectID, id)
	if errors.Is(err, monitors.ErrNotFound) {
		return notFound("channel", id)
	}
	if err != nil {
		return err
	}
	if h.tester == nil {
		return &apiError{status: http.StatusNotImplemented, msg: "this server sends no notifications, so it cannot test a channel"}
	}
	err = h.tester.TestChannel(c.Request().Context(), ch)
	if errors.Is(err, ErrTestUnavailable) {
		return &apiError{status: http.StatusNotImplemented, msg: err.Error()}
	}
	if err != nil {
		return &apiError{status: http.StatusBadGateway, msg: "the test notification failed: " + err.Error()}
	}
	return c.JSON(http.StatusOK, ChannelTestResult{OK: true})
}

func compactJSON(raw json.RawMessage) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, invalidf("config", "is not valid JSON")
	}
	return b.Bytes(), nil
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
