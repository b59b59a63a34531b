package healthchecks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ClientTimeoutDefault bounds one request of a [Client] when its HTTP
// client has no timeout of its own.
const ClientTimeoutDefault = 30 * time.Second

// responseLimit caps what the client reads of one answer.
const responseLimit = 64 << 20

// Check is a check as Healthchecks' management API v3 returns it. A
// read-only key gets UniqueKey and no UUID, URLs or Channels.
type Check struct {
	UUID         string  `json:"uuid"`
	UniqueKey    string  `json:"unique_key"`
	Name         string  `json:"name"`
	Slug         string  `json:"slug"`
	Tags         string  `json:"tags"`
	Desc         string  `json:"desc"`
	Grace        int64   `json:"grace"`
	Status       string  `json:"status"`
	Timeout      *int64  `json:"timeout"`
	Schedule     string  `json:"schedule"`
	TZ           string  `json:"tz"`
	Channels     *string `json:"channels"`
	ManualResume bool    `json:"manual_resume"`
	Methods      string  `json:"methods"`
	Subject      string  `json:"subject"`
	SubjectFail  string  `json:"subject_fail"`
	StartKW      string  `json:"start_kw"`
	SuccessKW    string  `json:"success_kw"`
	FailureKW    string  `json:"failure_kw"`
	FilterSubj   bool    `json:"filter_subject"`
	FilterBody   bool    `json:"filter_body"`
	FilterHTTP   bool    `json:"filter_http_body"`
	PingURL      string  `json:"ping_url"`
}

// Integration is an integration (Healthchecks' name for a channel) as its
// API lists it: no settings, only what it is.
type Integration struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Kind string `json:"kind"`
}

// Client reads a Healthchecks project through its management API v3.
type Client struct {
	base   string // the site root, without a trailing slash
	apiKey string
	http   *http.Client
}

// NewClient returns a client of the Healthchecks at siteURL (such as
// https://healthchecks.io, or a self-hosted instance's root; a URL that
// ends in /api/v3 is taken as well) with an API key of one of its
// projects. hc nil is an http.Client with ClientTimeoutDefault.
func NewClient(siteURL, apiKey string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(siteURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("healthchecks URL %q: want the site's address, such as https://healthchecks.io", siteURL)
	}
	if strings.TrimSpace(apiKey) == "" {
		return nil, errors.New("healthchecks API key: none given")
	}
	u.RawQuery, u.Fragment = "", ""
	base := strings.TrimRight(u.String(), "/")
	for _, suffix := range []string{"/api/v3", "/api"} {
		base = strings.TrimSuffix(base, suffix)
	}
	if hc == nil {
		hc = &http.Client{Timeout: ClientTimeoutDefault}
	}
	return &Client{base: base, apiKey: strings.TrimSpace(apiKey), http: hc}, nil
}

// BaseURL is the site root the client calls.
func (c *Client) BaseURL() string { return c.base }

// APIError is an answer of Healthchecks other than 200.
type APIError struct {
	Path   string
	Status int
	// Message is Healthchecks' {"error": ...}, or the start of the body.
	Message string
}

func (e *APIError) Error() string {
	what := fmt.Sprintf("Healthchecks answered GET %s with %d %s", e.Path, e.Status, http.StatusText(e.Status))
	if e.Message != "" {
		what += ": " + e.Message
	}
	switch {
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		what += " (is --api-key an API key of the project, from its Settings page?)"
	case e.Status >= 500:
		what += " (a fault on Healthchecks' side: try again later)"
	}
	return what
}

// get reads path into dst.
func (c *Client) get(ctx context.Context, path string, dst any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return fmt.Errorf("request %s: %w", path, err)
	}
	req.Header.Set("X-Api-Key", c.apiKey)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "vigil-import")
	resp, err := c.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is said below, once
		}
		return fmt.Errorf("reach Healthchecks at %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, responseLimit))
	if err != nil {
		return fmt.Errorf("read Healthchecks' answer to GET %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		msg := ""
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			msg = e.Error
		} else {
			msg = strings.TrimSpace(string(body[:min(len(body), 200)]))
		}
		return &APIError{Path: path, Status: resp.StatusCode, Message: msg}
	}
	if err := json.Unmarshal(body, dst); err != nil {
		return fmt.Errorf("Healthchecks' answer to GET %s is not the JSON its API documents: %w", path, err)
	}
	return nil
}

// Checks returns every check of the key's project.
func (c *Client) Checks(ctx context.Context) ([]Check, error) {
	var out struct {
		Checks *[]Check `json:"checks"`
	}
	if err := c.get(ctx, "/api/v3/checks/", &out); err != nil {
		return nil, err
	}
	if out.Checks == nil {
		return nil, errors.New("Healthchecks' answer to GET /api/v3/checks/ has no \"checks\" list")
	}
	return *out.Checks, nil
}

// Integrations returns every integration of the key's project. A
// read-only key gets a 401 *APIError.
func (c *Client) Integrations(ctx context.Context) ([]Integration, error) {
	var out struct {
		Channels *[]Integration `json:"channels"`
	}
	if err := c.get(ctx, "/api/v3/channels/", &out); err != nil {
		return nil, err
	}
	if out.Channels == nil {
		return nil, errors.New("Healthchecks' answer to GET /api/v3/channels/ has no \"channels\" list")
	}
	return *out.Channels, nil
}
