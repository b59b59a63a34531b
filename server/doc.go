// Package server assembles a Vigil server from its parts: the store, the
// HTTP routes of ingest, the API and the dashboard, and the background
// services (evaluator, delivery, pruning). It is the composition root that
// "vigil serve" runs and that end-to-end tests start in-process.
package server
