package main

import "github.com/vigilhq/vigil/server"

// apiSettings lists the settings of the management API under /api/v1, /metrics and badges.
func apiSettings(c *server.APISettings) []setting {
	return nil
}
