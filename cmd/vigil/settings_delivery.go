package main

import "github.com/vigilhq/vigil/server"

// deliverySettings lists the settings of durable delivery of notifications.
func deliverySettings(c *server.DeliverySettings) []setting {
	return nil
}
