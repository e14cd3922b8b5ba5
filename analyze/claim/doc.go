// Package claim reads written claims about a trace's metrics (the claim
// language of `llmreplay check` and `report --claim`) and judges each one
// against analyze's results: pass, fail or inconclusive, with the evidence
// and the sample rule behind the verdict.
//
// It is a client of analyze's core: it imports analyze and ground helpers
// only, never the replay side, so a claim is always judged offline.
package claim
