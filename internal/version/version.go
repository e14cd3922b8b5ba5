// Package version holds the tool version that every file llmreplay writes
// records in its header, so a reader can say which tool wrote a file.
package version

// Tool is the llmreplay release. Bump it with every release; files record it
// so a trace can always be traced back to the code that recorded it.
const Tool = "0.1.0"
