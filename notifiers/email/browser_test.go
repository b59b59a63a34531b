package email_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/notifiers"
	"github.com/vigilhq/vigil/notifiers/email"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
)

// updateScreenshotsEnv names the variable that makes the test write its
// screenshots to docs/screenshots, as the dashboard's browser test does.
const updateScreenshotsEnv = "VIGIL_UPDATE_SCREENSHOTS"

// TestHTMLInBrowser opens the HTML part of the sample e-mails in headless
// Chromium, as a mail client's web view would, and checks what a reader
// sees: the headline, the facts, the output's tail ending in
// "boom: disk full" with its markup shown as text, and the links. With
// VIGIL_UPDATE_SCREENSHOTS set it writes docs/screenshots/email-*.png,
// which the README shows.
func TestHTMLInBrowser(t *testing.T) {
	chromium := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			chromium = p
			break
		}
	}
	if chromium == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed; CI must install it (apt-get install -y chromium)")
		}
		t.Skip("chromium is not installed; skipping the browser test")
	}
	pages := map[string]*notifiers.Notification{"/failure": notifiertest.Failure(), "/undeclared": notifiertest.Undeclared(),
		"/report": notifiertest.WeeklyReport()}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, html, err := email.Render(n)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(html))
	}))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(700, 900))...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()

	text := func(path string) string {
		t.Helper()
		_, err := chromedp.Run(bctx, chromedp.Navigate(srv.URL+path))
		require.NoError(t, err)
		got, err := chromedp.Run(bctx, chromedp.Evaluate[string]("document.body.innerText"))
		require.NoError(t, err)
		return got
	}
	attr := func(expr string) string {
		t.Helper()
		got, err := chromedp.Run(bctx, chromedp.Evaluate[string](expr))
		require.NoError(t, err)
		return got
	}
	shot := func(name string) {
		t.Helper()
		if os.Getenv(updateScreenshotsEnv) == "" {
			return
		}
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		require.NoError(t, err)
		dir := filepath.Join("..", "..", "docs", "screenshots")
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644))
		t.Logf("wrote docs/screenshots/%s.png", name)
	}

	got := text("/failure")
	for _, want := range []string{
		"DOWN nightly-import: failed after 4 attempts",
		"nightly-import failed at 02:00 Europe/Berlin (exit status 3)",
		"Exit status\t3", "Attempt\t4, final: no retry announced", "Duration\t12.4 s",
		"Expected\t2026-03-15 02:00 CET (01:00 UTC)",
		"loaded 1200 rows from <orders> & <refunds>", // markup shown as text
		"boom: disk full",
		"Open in Vigil", "Open the run",
	} {
		require.Contains(t, got, want)
	}
	require.True(t, strings.HasSuffix(attr(`document.querySelector("pre").innerText`), "boom: disk full"), "the output ends with the failure")
	require.Equal(t, "0", attr(`String(document.querySelectorAll("pre b, pre script, pre orders").length)`), "no markup from the output")
	require.Equal(t, "https://vigil.example.com/monitors/mon_7f3a#run-42", attr(`[...document.links].find(a => a.textContent === "Open the run").href`))
	shot("email-failure")

	got = text("/undeclared")
	for _, want := range []string{
		"UNDECLARED nightly-import: no longer declared by its source",
		`no longer declared by source "billing-service" (last declared 2026-03-10 08:12 Europe/Berlin)`,
		"Source\tbilling-service", "Undeclared\t2026-03-14 10:30 CET (09:30 UTC)",
	} {
		require.Contains(t, got, want)
	}
	require.NotContains(t, got, "Open the run")
	shot("email-undeclared")

	got = text("/report")
	for _, want := range []string{
		"Weekly report for Billing & Ops: week of 23–29 Nov 2026 (UTC)",
		"Period: 2026-11-23 00:00 UTC to 2026-11-30 00:00 UTC",
		"Monitors with incidents", "<b>reports</b> & exports: failed 1 (4h)", // markup shown as text
		"Slowest jobs (p95 run duration)", "Most retried jobs", "Monitors that never pinged", "and 11 more",
	} {
		require.Contains(t, got, want)
	}
	require.Equal(t, "0", attr(`String(document.querySelectorAll("li b").length)`), "no markup from a monitor's name")
	require.Equal(t, "https://vigil.example.com/monitors/mon_7f3a", attr(`[...document.links].find(a => a.textContent === "nightly-import").href`))
	shot("email-report")
}
