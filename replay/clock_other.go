//go:build !linux

package replay

import "github.com/llmreplay/llmreplay/trace"

// WallClockError: other systems give no error estimate through a portable
// call; the trace then says the error is unknown, and trace merge asks for
// --allow-clock when such shards ran on different hosts.
func WallClockError() trace.Clock { return trace.Clock{} }
