package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/vigilhq/vigil/monitors"
)

// FuzzFormDecoding: whatever a browser (or anyone) posts, reading the form
// (the body limit of formLimit), the monitor form and every kind's channel
// form either refuses it with 400 or 413, or decodes it into values the
// validation judges; nothing panics, and a decoded monitor either
// validates or names the field at fault. The seed corpus is
// testdata/fuzz/FuzzFormDecoding.
func FuzzFormDecoding(f *testing.F) {
	f.Add("application/x-www-form-urlencoded", "name=nightly&schedule_kind=cron&expr=0+2+*+*+*&tz=Europe%2FBerlin&grace=5m")
	f.Add("application/x-www-form-urlencoded", "name=%ff%fe&schedule_kind=interval&every=-1s&channels=a&channels=b&grace=99999999999h")
	f.Add("application/x-www-form-urlencoded", "url=https%3A%2F%2Fh.example.com&headers=Authorization%3A+Bearer+x%0ABad&template=%7B%7Brange+9%7D%7D")
	f.Add("multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nn\r\n--x--\r\n")
	f.Add("application/x-www-form-urlencoded", "%zz=1&&&=&name")
	f.Add("text/plain", strings.Repeat("a", 1000))
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, contentType, body string) {
		e := echo.New()
		req := httptest.NewRequest(http.MethodPost, "/monitors", strings.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		rec := httptest.NewRecorder()
		if err := readForm(rec, req); err != nil {
			return // formLimit answers 413 or 400
		}
		c := e.NewContext(req, rec)
		mf, err := formFromRequest(c)
		if err != nil {
			return
		}
		m := &monitors.Monitor{ID: "m", ProjectID: "p", PingKey: "k", CreatedAt: now, UpdatedAt: now}
		mf.apply(m, nil)
		mf.validate(m, now)
		if len(mf.Errors) == 0 {
			if err := m.Validate(); err != nil {
				t.Fatalf("the form found no problem, the monitor has one: %v", err)
			}
		}
		for i := range channelKinds {
			cf := &channelForm{Kind: &channelKinds[i], Values: map[string]string{}, Secrets: map[string]bool{}, Errors: map[string]string{}}
			raw := cf.readConfig(c)
			if len(raw) == 0 || raw[0] != '{' {
				t.Fatalf("%s: config is not a JSON object: %q", channelKinds[i].Name, raw)
			}
		}
	})
}
