// Package deploy holds how Vigil is installed: the systemd unit, the
// Kubernetes manifests, and, at the root of the repository, the
// Containerfile. Its tests check them: the binary built with the
// Containerfile's flags runs in an empty root with zone names, the unit
// passes systemd-analyze, and the manifests agree with vigil serve's
// probes and shutdown.
package deploy
