package delivery

import (
	"context"
	"time"
)

// SetRescueEvery sets how often c's service looks for jobs left running by
// a process that died, so that tests need not wait for the default.
func SetRescueEvery(c *Config, d time.Duration) { c.rescueEvery = d }

// SetGroupPoll bounds how long a grouped delivery waits at a time for its
// group's time, so that tests that move the clock need not wait a minute.
func SetGroupPoll(c *Config, d time.Duration) { c.groupPoll = d }

// SetFetchCooldown sets the least time between two fetches of jobs.
func SetFetchCooldown(c *Config, d time.Duration) { c.fetchCooldown = d }

// RescueOnce runs one look for jobs left running, as the service's loop
// does.
func (s *Service) RescueOnce(ctx context.Context) (int, error) { return s.rescueOnce(ctx) }

// RescueEveryDefault is how often a service looks for jobs left running.
const RescueEveryDefault = rescueEveryDefault
