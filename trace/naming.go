package trace

import (
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// ResultsDir is where replay and bench write when no output is named.
const ResultsDir = "results"

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// RunName names the files of a run "LABEL-20261203T101500Z": the label (or
// the model, or fallback when both are empty), made safe on every file
// system, and the start time in UTC. replay and bench both name their
// outputs with it, so the two commands' files sort together.
func RunName(label, model, fallback string, start time.Time) string {
	name := label
	if name == "" {
		name = model
	}
	name = strings.Trim(unsafeName.ReplaceAllString(name, "-"), "-")
	if name == "" {
		name = fallback
	}
	return name + "-" + start.UTC().Format("20060102T150405Z")
}

// DefaultPath is the trace path of a run under ResultsDir:
// results/RunName(…)SUFFIX.trace.zst (SUFFIX marks a shard, "-shard0of4").
func DefaultPath(label, model string, start time.Time, suffix string) string {
	return filepath.Join(ResultsDir, RunName(label, model, "run", start)+suffix+".trace.zst")
}
