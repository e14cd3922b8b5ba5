package trace

import "errors"

// The decompressed stream of every trace starts with magic, then the major
// and minor version as unsigned LEB128 varints, so a reader learns the
// version before it parses anything else. docs/TRACE_FORMAT.md describes
// every byte.
const magic = FormatName

// Entry tags. Every entry after the header is a tag, a byte length and that
// many bytes, so a reader skips entries of a kind it does not know (added by
// a later minor version) without understanding them. Tag 0 is never valid:
// a run of zero bytes (a zeroed disk block, a zstd bomb of zeros) is corrupt
// data, not an endless series of empty entries.
const (
	tagRecord = 1
	// tagShard (1.1): a uvarint shard index that applies to every record
	// after it until the next shard entry; written only by trace merge.
	tagShard = 2
	// tagScrape (1.3): one Scrape (the server's /metrics or a watched
	// process), written when it was taken, between the records.
	tagScrape = 3
	// tagProgress (1.6): what the run had sent and the writer had written
	// by a flush (Progress); the last one, written by Close, says the
	// trace is complete.
	tagProgress = 4
)

// Limits that keep a hostile or corrupt file from making the reader allocate
// without bound. Real records are a few KiB (a 32k-token answer is well under
// 1 MiB); the limits are far above anything a replay writes.
const (
	maxHeaderBytes = 16 << 20
	maxEntryBytes  = 256 << 20
	// maxWindow bounds the zstd decoder's history buffer. The writer uses
	// at most a 4 MiB window; 64 MiB leaves room for files recompressed by
	// other tools at higher levels.
	maxWindow = 64 << 20
)

// Record flags (v1 field "flags").
const (
	flagWarmup    = 1 << 0
	flagError     = 1 << 1
	flagReasoning = 1 << 2 // the record has a reasoning-length column and reasoning bytes
	flagTokens    = 1 << 3 // the record has a tokens column
	flagServerT   = 1 << 4 // the record has a server-time column
	// flagUserTimes (1.6): the request kept user-space times in a run
	// whose chunk times are kernel stamps (Record.UserTimes).
	flagUserTimes = 1 << 5
)

// errShort is a record body that ends before its fields do.
var errShort = errors.New("record ends early")
