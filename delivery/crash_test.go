package delivery_test

import (
	"context"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/internal/vigilproc"
	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/storetest"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
	"github.com/vigilhq/vigil/notifiers/webhook"
	"github.com/vigilhq/vigil/server"
)

// TestKillDuringSend kills the real binary with SIGKILL while a webhook
// receiver holds its notification without answering, and starts it again:
// the receiver gets that notification again within 60 s of the restart,
// with the same Vigil-Delivery-Id, and the recovery queued behind it
// follows without waiting longer. The attempt timeout is 1 s here, so the
// rescue comes 16 s after the attempt began; TestRescueAfterDefault
// checks the default.
func TestKillDuringSend(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := vigilproc.Build(t)
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			dbURL := testdb.SQLitePath(t)
			if dialect == "postgres" {
				dbURL = testdb.PostgresURL(t)
			}
			var (
				mu      sync.Mutex
				hanging = true
			)
			first := make(chan struct{})
			recv := notifiertest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				hang := hanging
				hanging = false
				mu.Unlock()
				if hang {
					close(first)
					<-r.Context().Done()
				}
			})

			ctx := context.Background()
			store, err := server.OpenStore(ctx, dbURL, testdb.Logger(t))
			require.NoError(t, err)
			prj := storetest.MustProject(t, store)
			m := storetest.MustMonitor(t, store, prj.ID, "job", func(m *monitors.Monitor) { m.PingKey = keys.NewPingKey() })
			_, err = store.ChannelCreate(ctx, &monitors.ChannelCreateParams{ID: storetest.RandomID("ch_"), ProjectID: prj.ID,
				Kind: "webhook", Name: "hook", Config: []byte(`{"url": "` + recv.URL + `"}`), IsDefault: true, Now: time.Now()})
			require.NoError(t, err)
			require.NoError(t, store.Close())

			env := []string{"VIGIL_ALLOW_PRIVATE_TARGETS=true", "VIGIL_DELIVERY_TIMEOUT=1s"}
			p := vigilproc.Start(t, bin, dbURL, env...)
			ping := func(p *vigilproc.Proc, suffix string) {
				res, err := http.Post("http://"+p.Addr+"/ping/"+m.PingKey+suffix, "text/plain", nil)
				require.NoError(t, err)
				res.Body.Close()
				require.Equal(t, http.StatusOK, res.StatusCode)
			}
			ping(p, "/fail")
			select {
			case <-first:
			case <-time.After(30 * time.Second):
				t.Fatal("the notification was not sent")
			}
			ping(p, "") // the recovery, queued behind the hanging alert
			require.NoError(t, p.Cmd.Process.Signal(syscall.SIGKILL))
			<-p.Done

			restarted := time.Now()
			vigilproc.Start(t, bin, dbURL, env...)
			require.Eventually(t, func() bool { return len(recv.Requests()) >= 2 }, 60*time.Second, 50*time.Millisecond,
				"the alert arrives again within 60 s of the restart")
			t.Logf("alert resent %s after the restart", time.Since(restarted).Round(time.Millisecond))
			require.Eventually(t, func() bool { return len(recv.Requests()) >= 3 }, time.Until(restarted.Add(60*time.Second)),
				50*time.Millisecond, "the recovery follows within 60 s of the restart")
			t.Logf("recovery sent %s after the restart", time.Since(restarted).Round(time.Millisecond))
			reqs := recv.Requests()
			require.Len(t, reqs, 3)
			id := reqs[0].Header.Get(webhook.DeliveryIDHeader)
			require.NotEmpty(t, id)
			require.Equal(t, id, reqs[1].Header.Get(webhook.DeliveryIDHeader), "the alert again, with the same ID")
			require.Contains(t, string(reqs[1].Body), `"event":"incident.opened"`)
			require.Contains(t, string(reqs[2].Body), `"event":"incident.resolved"`)
			require.NotEqual(t, id, reqs[2].Header.Get(webhook.DeliveryIDHeader))
		})
	}
}
