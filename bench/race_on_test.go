//go:build race

package bench

// raceEnabled: the race detector slows the client several times over, so at
// thousands of tokens per second it, not the simulated server, sets the pace.
const raceEnabled = true
