package trace

import (
	"fmt"
	"time"
)

// Describe says how far a machine's wall clock could be trusted, for
// people: a shard's line in trace info, a warning before a shard runs.
func (c Clock) Describe() string {
	switch {
	case c.Source == "":
		return "error unknown (the OS gave no estimate)"
	case !c.Synced:
		return "not synchronised (" + c.Source + ")"
	default:
		return fmt.Sprintf("synchronised, estimated error %v, maximum %v (%s)", time.Duration(c.EstErrorNs), time.Duration(c.MaxErrorNs), c.Source)
	}
}
