// Package notifiers defines how Vigil tells people about incidents: the
// [Notification] that describes what happened, the [Notifier] interface that
// every channel kind implements, and the pieces that all kinds share.
//
// # One attempt per call
//
// A [Notifier] makes exactly one delivery attempt per call to Notify and
// never retries by itself. Durable delivery (a queue, backoff, the delivery
// log, "never twice on success") is built on top of this interface, so that a
// crash between attempts loses nothing. What the delivery layer needs from an
// attempt is its outcome class:
//
//   - nil: delivered.
//   - [IsPermanent] reports true: retrying cannot help (bad configuration, a
//     4xx answer other than 408 and 429, a template that fails, a refused
//     address). The delivery should be marked failed at once.
//   - anything else: retryable. [RetryAfter] reports how long the receiver
//     asked us to wait, when it said so (429 and 503 with Retry-After).
//
// Errors are retryable by default, so a forgotten classification errs on the
// side of trying again rather than dropping a page.
//
// # Secrets
//
// Channel secrets (webhook URLs, tokens, routing keys) never appear in error
// text: every kind passes its errors through [RedactError] with the secrets
// it holds, and [ClassifyHTTP] keeps only a short, URL-free piece of a
// response body. Errors produced by net/http carry the request URL in a
// *url.Error; RedactError removes it.
//
// # Outgoing connections
//
// [NewHTTPClient] returns the client every HTTP kind uses by default. Its
// dialer checks the address it is about to connect to, after DNS resolution,
// and refuses loopback, private, link-local and similar addresses unless the
// operator allowed them (VIGIL_ALLOW_PRIVATE_TARGETS). Checking at connect time
// rather than when a channel is saved is what stops a DNS name that later
// resolves to 127.0.0.1 or 169.254.169.254.
//
// # Kinds
//
// Each channel kind lives in its own subpackage (slack, email, webhook,
// pagerduty, discord, teams, opsgenie, telegram, ntfy) with a Config, a
// Validate method, New and Notify. This package never imports them; the
// registry in notifiers/kinds does.
package notifiers
