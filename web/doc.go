// Package web is Vigil's dashboard: the pages an on-call engineer opens to
// see which jobs are down and why, and where people create and edit
// monitors, alert channels and API keys.
//
// Pages are rendered on the server with html/template from the store; the
// templates, the stylesheet, a little JavaScript and a vendored copy of
// htmx (see static/NOTICE) are embedded in the binary. Every page works
// without JavaScript; with it, lists and monitor pages refresh their live
// parts every few seconds, the schedule preview follows the form as it is
// typed, and copy buttons copy.
//
// # Accounts and sessions
//
// People sign in with an email and a password (bcrypt). When the database
// has no user yet, the front page offers to create the first account, which
// joins the first project; that form works only while no user exists.
// Further accounts are made with "vigil users create". A person sees only the
// projects they are a member of: every monitor, channel and key is loaded
// through the current project, and one of another project is "not found".
//
// A signed-in browser holds a random session token in an HttpOnly,
// SameSite=Lax cookie (Secure, with the __Host- prefix, when the base URL is
// https); the store keeps only the token's SHA-256. Sessions last
// [SessionLifetime] and are renewed while used.
//
// # Cross-site request forgery
//
// Every state-changing request passes two checks: the browser's
// Sec-Fetch-Site or Origin header must name this site (Go's
// [net/http.CrossOriginProtection]), and a signed-in request must carry the
// session's CSRF token, as a hidden form field or, from htmx, as the
// X-CSRF-Token header.
package web
