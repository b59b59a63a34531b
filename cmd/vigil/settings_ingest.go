package main

import "github.com/vigilhq/vigil/server"

// ingestSettings lists the settings of the ping endpoints (/ping/...) and the batching writer.
func ingestSettings(c *server.IngestSettings) []setting {
	return nil
}
