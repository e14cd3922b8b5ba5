//go:build race

package sim

// raceEnabled: the race detector makes every token several times dearer,
// so the full-size real-time calibration is left to normal builds.
const raceEnabled = true
