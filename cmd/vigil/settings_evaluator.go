package main

import (
	"strconv"
	"time"

	"github.com/vigilhq/vigil/evaluator"
)

// evaluatorSettings lists the settings of the evaluator loop.
func evaluatorSettings(c *evaluator.Config) []setting {
	return []setting{
		{"VIGIL_EVALUATOR_BATCH_SIZE", "evaluator-batch-size", strconv.Itoa(evaluator.BatchSizeDefault),
			"due monitors evaluated in one transaction", intSetting(&c.BatchSize, 1, evaluator.BatchSizeMax)},
		{"VIGIL_EVALUATOR_POLL_INTERVAL", "evaluator-poll-interval", evaluator.PollIntervalDefault.String(),
			"longest wait between two evaluator passes when no deadline comes sooner (at most 1s)",
			durationSetting(&c.PollInterval, time.Millisecond, evaluator.PollIntervalMax)},
		{"VIGIL_OUTAGE_THRESHOLD", "outage-threshold", "1m",
			"a gap longer than this in every evaluator's passes is an outage of Vigil: monitors due in it get a fresh grace window",
			durationSetting(&c.OutageThreshold, evaluator.OutageThresholdMin, 24*time.Hour)},
	}
}
