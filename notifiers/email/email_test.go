package email_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/notifiers"
	"github.com/vigilhq/vigil/notifiers/email"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
)

const (
	smtpUser     = "vigil-mailer"
	smtpPassword = "pa55-w0rd-secret"
)

// received is one message the test server accepted.
type received struct {
	From     string
	To       []string
	Data     []byte
	AuthUser string
	AuthTLS  bool // AUTH happened over TLS
	DataTLS  bool // DATA happened over TLS
}

// smtpServer is a real SMTP server (go-smtp) on 127.0.0.1.
type smtpServer struct {
	Port int
	// RejectRcpt and RejectData answer RCPT TO and DATA with an error.
	RejectRcpt *smtp.SMTPError
	RejectData *smtp.SMTPError

	mu       sync.Mutex
	messages []received
}

func (s *smtpServer) Messages() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.messages...)
}

type session struct {
	srv  *smtpServer
	conn *smtp.Conn
	msg  received
}

func (s *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *session) Auth(mech string) (sasl.Server, error) {
	if mech != sasl.Plain {
		return nil, smtp.ErrAuthUnknownMechanism
	}
	return sasl.NewPlainServer(func(_, username, password string) error {
		if username != smtpUser || password != smtpPassword {
			return smtp.ErrAuthFailed
		}
		_, s.msg.AuthTLS = s.conn.TLSConnectionState()
		s.msg.AuthUser = username
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error { s.msg.From = from; return nil }

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if s.srv.RejectRcpt != nil {
		return s.srv.RejectRcpt
	}
	s.msg.To = append(s.msg.To, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if s.srv.RejectData != nil {
		return s.srv.RejectData
	}
	s.msg.Data = data
	_, s.msg.DataTLS = s.conn.TLSConnectionState()
	s.srv.mu.Lock()
	s.srv.messages = append(s.srv.messages, s.msg)
	s.srv.mu.Unlock()
	return nil
}

func (s *session) Reset() { s.msg = received{AuthUser: s.msg.AuthUser, AuthTLS: s.msg.AuthTLS} }

func (s *session) Logout() error { return nil }

// startSMTP starts a server. With tlsConfig and implicit, the listener is
// TLS from the first byte; with tlsConfig alone it offers STARTTLS and
// advertises AUTH only after it.
func startSMTP(t *testing.T, tlsConfig *tls.Config, implicit bool, configure func(*smtpServer)) *smtpServer {
	t.Helper()
	srv := &smtpServer{}
	if configure != nil {
		configure(srv)
	}
	be := smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &session{srv: srv, conn: c}, nil
	})
	s := smtp.NewServer(be)
	s.Domain = "localhost"
	s.ReadTimeout = 10 * time.Second
	s.WriteTimeout = 10 * time.Second
	s.AllowInsecureAuth = false
	s.TLSConfig = tlsConfig

	var l net.Listener
	var err error
	if implicit {
		l, err = tls.Listen("tcp", "127.0.0.1:0", tlsConfig)
	} else {
		l, err = net.Listen("tcp", "127.0.0.1:0")
	}
	require.NoError(t, err)
	srv.Port = l.Addr().(*net.TCPAddr).Port
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Serve(l)
	}()
	t.Cleanup(func() {
		_ = s.Close()
		<-done
	})
	return srv
}

// selfSigned returns a server certificate for 127.0.0.1 and localhost and
// a pool that trusts it.
func selfSigned(t *testing.T) (*tls.Config, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "vigil test smtp"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}},
		MinVersion:   tls.VersionTLS12,
	}, pool
}

var recipients = []string{"oncall@example.com", "Ops Team <ops@example.org>"}

func newNotifier(t *testing.T, server email.SMTPConfig) *email.Notifier {
	t.Helper()
	n, err := email.New(email.Config{To: recipients}, server, notifiers.WithTimeout(10*time.Second))
	require.NoError(t, err)
	return n
}

// parsed is a received message taken apart.
type parsed struct {
	Header mail.Header
	Text   string
	HTML   string
}

func parse(t *testing.T, data []byte) parsed {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(data))
	require.NoError(t, err)
	mediaType, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	require.NoError(t, err)
	require.Equal(t, "multipart/alternative", mediaType)
	out := parsed{Header: msg.Header}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	var types []string
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		partType, partParams, err := mime.ParseMediaType(part.Header.Get("Content-Type"))
		require.NoError(t, err)
		require.Equal(t, "utf-8", strings.ToLower(partParams["charset"]))
		var body io.Reader = part
		if part.Header.Get("Content-Transfer-Encoding") == "quoted-printable" {
			body = quotedprintable.NewReader(part)
		}
		raw, err := io.ReadAll(body)
		require.NoError(t, err)
		types = append(types, partType)
		text := strings.ReplaceAll(string(raw), "\r\n", "\n") // SMTP lines end in CRLF
		switch partType {
		case "text/plain":
			out.Text = text
		case "text/html":
			out.HTML = text
		}
	}
	require.Equal(t, []string{"text/plain", "text/html"}, types, "both MIME parts, plain text first")
	return out
}

func TestStartTLSWithAuthPlain(t *testing.T) {
	t.Parallel()
	serverTLS, pool := selfSigned(t)
	srv := startSMTP(t, serverTLS, false, nil)
	n := newNotifier(t, email.SMTPConfig{
		Host: "127.0.0.1", Port: srv.Port, Username: smtpUser, Password: smtpPassword,
		From: "Vigil <vigil@alerts.example.com>", TLS: email.TLSStartTLS,
		TLSConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
	})

	require.NoError(t, n.Notify(context.Background(), notifiertest.Opened()))
	require.NoError(t, n.Notify(context.Background(), notifiertest.Resolved()))

	msgs := srv.Messages()
	require.Len(t, msgs, 2)
	for _, m := range msgs {
		require.Equal(t, smtpUser, m.AuthUser)
		require.True(t, m.AuthTLS, "AUTH PLAIN only after STARTTLS")
		require.True(t, m.DataTLS)
		require.Equal(t, "vigil@alerts.example.com", m.From)
		require.Equal(t, []string{"oncall@example.com", "ops@example.org"}, m.To)
	}

	opened := parse(t, msgs[0].Data)
	require.Equal(t, "[Vigil] DOWN nightly-import: missed", opened.Header.Get("Subject"))
	require.Equal(t, `"Vigil" <vigil@alerts.example.com>`, opened.Header.Get("From"))
	require.Equal(t, `<oncall@example.com>, "Ops Team" <ops@example.org>`, opened.Header.Get("To"))
	require.Equal(t, "<vigil.inc_01HZX3M4W6.opened@alerts.example.com>", opened.Header.Get("Message-Id"))
	require.Equal(t, "auto-generated", opened.Header.Get("Auto-Submitted"))
	date, err := opened.Header.Date()
	require.NoError(t, err)
	require.True(t, date.Equal(notifiertest.SentAt), "Date is the notification's SentAt: %s", date)
	for _, want := range []string{
		"DOWN nightly-import: missed",
		"nightly-import did not run at 02:00 Europe/Berlin (grace 5m)",
		"Expected at 2026-03-14 01:00 UTC; last ping (success) at 2026-03-13 01:00 UTC.",
		"Schedule: 0 2 * * * (Europe/Berlin)\n",
		"Expected: 2026-03-14 01:00 UTC\n",
		"Last ping: 2026-03-13 01:00 UTC\n",
		"Open in Vigil: https://vigil.example.com/monitors/mon_7f3a\n",
	} {
		require.Contains(t, opened.Text, want)
	}
	require.Contains(t, opened.HTML, "<h1 style=\"margin:0 0 12px;font-size:20px\">DOWN nightly-import: missed</h1>")
	require.Contains(t, opened.HTML, `href="https://vigil.example.com/monitors/mon_7f3a"`)
	require.Contains(t, opened.HTML, "border-top:6px solid #D92D20")
	require.Contains(t, opened.HTML, "<td style=\"padding:2px 0\">2026-03-13 01:00 UTC</td>")

	resolved := parse(t, msgs[1].Data)
	require.Equal(t, "[Vigil] UP nightly-import: recovered after 12m", resolved.Header.Get("Subject"))
	require.Equal(t, "<vigil.inc_01HZX3M4W6.resolved@alerts.example.com>", resolved.Header.Get("Message-Id"))
	require.Equal(t, "<vigil.inc_01HZX3M4W6.opened@alerts.example.com>", resolved.Header.Get("In-Reply-To"), "same thread")
	require.Contains(t, resolved.Text, "Downtime: 12m\n")
	require.NotContains(t, resolved.Text, "Expected at", "no stale details on recovery")
	require.Contains(t, resolved.HTML, "border-top:6px solid #12B76A")
}

func TestImplicitTLS(t *testing.T) {
	t.Parallel()
	serverTLS, pool := selfSigned(t)
	srv := startSMTP(t, serverTLS, true, nil)
	n := newNotifier(t, email.SMTPConfig{
		Host: "127.0.0.1", Port: srv.Port, Username: smtpUser, Password: smtpPassword,
		From: "vigil@example.com", TLS: email.TLSImplicit,
		TLSConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
	})
	require.NoError(t, n.Notify(context.Background(), notifiertest.Opened()))
	msgs := srv.Messages()
	require.Len(t, msgs, 1)
	require.True(t, msgs[0].AuthTLS)
	require.Equal(t, smtpUser, msgs[0].AuthUser)
}

func TestNoTLSWithoutAuth(t *testing.T) {
	t.Parallel()
	srv := startSMTP(t, nil, false, nil)
	n := newNotifier(t, email.SMTPConfig{Host: "127.0.0.1", Port: srv.Port, From: "vigil@example.com", TLS: email.TLSNone})
	require.NoError(t, n.Notify(context.Background(), notifiertest.Opened()))
	msgs := srv.Messages()
	require.Len(t, msgs, 1)
	require.False(t, msgs[0].DataTLS)
	require.Empty(t, msgs[0].AuthUser)
	require.Equal(t, []string{"oncall@example.com", "ops@example.org"}, msgs[0].To)
	p := parse(t, msgs[0].Data)
	require.Equal(t, "[Vigil] DOWN nightly-import: missed", p.Header.Get("Subject"))
}

func TestSelfSignedCertIsRefusedWithoutTrust(t *testing.T) {
	t.Parallel()
	serverTLS, _ := selfSigned(t)
	srv := startSMTP(t, serverTLS, false, nil)
	n := newNotifier(t, email.SMTPConfig{Host: "127.0.0.1", Port: srv.Port, Username: smtpUser, Password: smtpPassword,
		From: "vigil@example.com", TLS: email.TLSStartTLS})
	err := n.Notify(context.Background(), notifiertest.Opened())
	require.Error(t, err)
	require.Contains(t, err.Error(), "certificate")
	require.Empty(t, srv.Messages())
	notifiertest.AssertNoSecretLeak(t, err, smtpPassword)
}

func TestStartTLSRequired(t *testing.T) {
	t.Parallel()
	srv := startSMTP(t, nil, false, nil) // offers no STARTTLS
	n := newNotifier(t, email.SMTPConfig{Host: "127.0.0.1", Port: srv.Port, Username: smtpUser, Password: smtpPassword,
		From: "vigil@example.com"})
	err := n.Notify(context.Background(), notifiertest.Opened())
	require.ErrorContains(t, err, "does not support STARTTLS")
	require.Empty(t, srv.Messages(), "no password and no message over a plain connection")
	notifiertest.AssertNoSecretLeak(t, err, smtpPassword)
}

func TestErrorClasses(t *testing.T) {
	t.Parallel()
	serverTLS, pool := selfSigned(t)
	trusted := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	cases := []struct {
		name      string
		configure func(*smtpServer)
		password  string
		want      notifiertest.Outcome
		contains  string
	}{
		{"550 mailbox unavailable", func(s *smtpServer) {
			s.RejectRcpt = &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user"}
		}, smtpPassword, notifiertest.Fail, "550"},
		{"451 try again later", func(s *smtpServer) {
			s.RejectRcpt = &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "greylisted"}
		}, smtpPassword, notifiertest.Retry, "451"},
		{"554 data rejected", func(s *smtpServer) {
			s.RejectData = &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 6, 0}, Message: "content rejected"}
		}, smtpPassword, notifiertest.Fail, "554"},
		{"452 storage", func(s *smtpServer) {
			s.RejectData = &smtp.SMTPError{Code: 452, EnhancedCode: smtp.EnhancedCode{4, 3, 1}, Message: "insufficient storage"}
		}, smtpPassword, notifiertest.Retry, "452"},
		{"535 bad password", nil, "wrong-" + smtpPassword, notifiertest.Fail, "535"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := startSMTP(t, serverTLS, false, c.configure)
			n := newNotifier(t, email.SMTPConfig{Host: "127.0.0.1", Port: srv.Port, Username: smtpUser, Password: c.password,
				From: "vigil@example.com", TLSConfig: trusted})
			err := n.Notify(context.Background(), notifiertest.Opened())
			require.Equal(t, c.want.String(), notifiertest.OutcomeOf(err).String(), "%v", err)
			require.ErrorContains(t, err, c.contains)
			notifiertest.AssertNoSecretLeak(t, err, c.password)
			require.Empty(t, srv.Messages())
		})
	}
}

func TestConnectionRefusedIsRetryable(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	n := newNotifier(t, email.SMTPConfig{Host: "127.0.0.1", Port: port, Username: smtpUser, Password: smtpPassword,
		From: "vigil@example.com"})
	err = n.Notify(context.Background(), notifiertest.Opened())
	require.Error(t, err)
	require.False(t, notifiers.IsPermanent(err), "%v", err)
	// The server's address is the operator's business, not the channel's.
	require.Contains(t, err.Error(), "connection refused")
	require.NotContains(t, err.Error(), "127.0.0.1:"+strconv.Itoa(port))
	notifiertest.AssertNoSecretLeak(t, err, smtpPassword)
}

func TestValidate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		cfg  email.Config
		want string
	}{
		{email.Config{To: []string{"a@example.com", "B <b@example.com>"}}, ""},
		{email.Config{}, "to: must list at least one address"},
		{email.Config{To: []string{"not an address"}}, `to[0]: "not an address" is not an e-mail address`},
		{email.Config{To: []string{"a@example.com", "a@example.com, b@example.com"}}, `to[1]: "a@example.com, b@example.com" is not an e-mail address`},
		{email.Config{To: []string{"a@example.com", "A@Example.com"}}, `to[1]: "A@Example.com" is listed twice`},
		{email.Config{To: make([]string, 51)}, "to: must list at most 50 addresses, not 51"},
	}
	for _, c := range cases {
		err := c.cfg.Validate()
		if c.want == "" {
			require.NoError(t, err)
			continue
		}
		require.EqualError(t, err, c.want)
	}

	server := []struct {
		cfg  email.SMTPConfig
		want string
	}{
		{email.SMTPConfig{Host: "smtp.example.com", From: "vigil@example.com"}, ""},
		{email.SMTPConfig{}, "smtp host: must be set\nsmtp from: must be set"},
		{email.SMTPConfig{Host: "h", From: "x", TLS: "ssl", Port: 70000, Password: "p"},
			"smtp port: 70000 is not between 1 and 65535\nsmtp tls: \"ssl\" is not one of starttls, tls, none\nsmtp username: must be set with a password\nsmtp from: \"x\" is not an e-mail address"},
	}
	for _, c := range server {
		err := c.cfg.Validate()
		if c.want == "" {
			require.NoError(t, err)
			continue
		}
		require.EqualError(t, err, c.want)
	}
	_, err := email.New(email.Config{To: []string{"a@example.com"}}, email.SMTPConfig{})
	require.ErrorContains(t, err, "email server: smtp host: must be set")
}
