package server

import (
	"context"
)

// This file wires durable delivery of notifications into the server.

// DeliverySettings configures durable delivery of notifications.
type DeliverySettings struct{}

func (s *Server) deliveryServices() []func(context.Context) { return nil }
