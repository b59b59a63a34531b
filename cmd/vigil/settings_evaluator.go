package main

import "github.com/vigilhq/vigil/server"

// evaluatorSettings lists the settings of the evaluator loop.
func evaluatorSettings(c *server.EvaluatorSettings) []setting {
	return nil
}
