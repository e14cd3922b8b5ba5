// Package analyze turns traces into the numbers people quote: per-request
// metrics (TTFT, TPOT, inter-token latency, per-stream speed), per-group
// metrics (aggregate throughput, percentiles, goodput, speed-up), trust
// warnings that say when a number cannot be believed, and verdicts on
// written claims.
//
// The pipeline is one way and streaming:
//
//	trace.Reader → Analyzer.Trace(...).Add(record) … → Analyzer.Result() → Table → renderer
//
// Add keeps no record: each one is reduced at once to per-request values in
// bounded accumulators (exact samples while small, a log-bucket histogram
// with ≤1% relative error beyond), so a trace of any length is analysed in
// bounded memory. Every metric is one entry of the registry (Metrics), so a
// metric added today applies to every trace ever recorded.
//
// Definitions differ between tools (vLLM counts one inter-token latency per
// chunk, GuideLLM's TPOT counts the first token, AIPerf's ITL is a per-request
// mean); a DefinitionSet recomputes the same trace the way a given tool
// would, so its published figure can be checked on its own terms.
package analyze
