package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"unicode"

	"github.com/labstack/echo/v4"

	"github.com/vigilhq/vigil/manage"
	"github.com/vigilhq/vigil/monitors"
)

// SourceMaxLen bounds a source's name.
const SourceMaxLen = 100

// checkSource validates a source name: 1 to 100 printable characters, no
// slash (it is a path segment).
func checkSource(s, field string) error {
	if s == "" && field == "source" {
		return nil // taking a monitor from its source
	}
	if s == "" || len(s) > SourceMaxLen {
		return invalidf(field, "must be 1 to %d characters", SourceMaxLen)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) || r == '/' {
			return invalidf(field, "%q must be printable characters without a slash", s)
		}
	}
	return nil
}

// declare answers PUT /api/v1/sources/{source}/monitors: the source's
// complete set of monitors. See the package documentation for the rules.
func (h *Handler) declare(c echo.Context, rq *request) error {
	source := pathParam(c, "source")
	if err := checkSource(source, "source (in the path)"); err != nil {
		return err
	}
	b, err := h.readBody(c)
	if err != nil {
		return err
	}
	var top struct {
		Monitors []json.RawMessage `json:"monitors"`
	}
	if _, err := decodeJSON(b, &top, "", nil); err != nil {
		return err
	}
	if top.Monitors == nil {
		return invalidf("monitors", "is required: the complete set of the source's monitors ([] for none)")
	}
	ctx := c.Request().Context()
	readOnly := readOnlyFields(Monitor{}, DeclaredMonitor{})
	want := make([]*monitors.Monitor, len(top.Monitors))
	where := make(map[string]int, len(top.Monitors))
	for i, raw := range top.Monitors {
		path := fmt.Sprintf("monitors[%d]", i)
		var in DeclaredMonitor
		obj, err := decodeJSON(raw, &in, path, readOnly)
		if err != nil {
			return err
		}
		if obj.isNull("retry_policy") {
			delete(obj, "retry_policy") // left out: none
		}
		if in.Slug == nil || *in.Slug == "" {
			return invalidf(join(path, "slug"), "is required: a source's monitors are keyed by slug")
		}
		if j, dup := where[*in.Slug]; dup {
			return invalidf(join(path, "slug"), "%q is declared twice (also monitors[%d])", *in.Slug, j)
		}
		where[*in.Slug] = i
		m := newMonitor(rq.key.ProjectID)
		if _, err := applyFields(m, &in.MonitorFields, obj, path); err != nil {
			return err
		}
		finishNew(m)
		if err := validateMonitor(m, path); err != nil {
			return err
		}
		want[i] = m
	}
	for i, m := range want {
		if err := h.checkChannels(ctx, rq, m.Channels, fmt.Sprintf("monitors[%d].channels", i)); err != nil {
			return err
		}
	}

	slugs := make([]string, len(want))
	for i, m := range want {
		slugs[i] = m.Slug
	}
	allowMass := false
	if v := c.QueryParam("allow_mass_undeclare"); v != "" {
		if allowMass, err = strconv.ParseBool(v); err != nil {
			return invalidf("allow_mass_undeclare", "%q is not true or false", v)
		}
	}
	outcome, err := h.manage.Declare(ctx, &manage.DeclareParams{
		ProjectID: rq.key.ProjectID, Source: source, Monitors: want, AllowMassUndeclare: allowMass})
	if err != nil {
		return err
	}
	res := DeclarationResult{}
	if res.Monitors, err = h.renderMonitors(c, rq, outcome.Declared, outcome.PersonFields); err != nil {
		return err
	}
	for i := range res.Monitors {
		res.Monitors[i].OverriddenFields = outcome.Overridden[i]
	}
	if res.Undeclared, err = h.renderMonitors(c, rq, outcome.Undeclared, outcome.PersonFields); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, res)
}
