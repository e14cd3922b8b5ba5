package cputime

import "time"

// Usage is CPU time in its two parts, as getrusage reports them.
type Usage struct {
	User, System time.Duration
}

// Total is user plus system time.
func (u Usage) Total() time.Duration { return u.User + u.System }

// Sub is the usage between an earlier reading and u.
func (u Usage) Sub(earlier Usage) Usage {
	return Usage{User: u.User - earlier.User, System: u.System - earlier.System}
}
