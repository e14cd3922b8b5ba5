//go:build unix

package trace

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/llmreplay/llmreplay/internal/testutil"
)

// killChildEnv makes the test binary, re-executed by TestSIGKILL, act as a
// replay that writes a trace until it is killed.
const killChildEnv = "LLMREPLAY_TRACE_KILL_CHILD"

// killRecord is the i-th record the child writes; the parent rebuilds it
// to check what it reads back.
func killRecord(i int) Record {
	r := Record{ID: fmt.Sprintf("r%d", i), Index: i, InputTokens: 100, MaxTokens: 32, Sent: int64(i) * 1_000_000, Status: 200}
	toks := countUpTokens(32)
	r.Chunks = make([]Chunk, len(toks))
	for k, tok := range toks {
		r.Chunks[k] = Chunk{T: r.Sent + int64(k+1)*1_234_567, Bytes: 180 + len(tok), Text: tok}
	}
	r.Done = r.Chunks[len(toks)-1].T + 1000
	return r
}

func killChild(path string) {
	w, err := Create(path, synthHeader, WithFlushInterval(100*time.Millisecond))
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	var reported int64
	stop := time.Now().Add(30 * time.Second) // in case the parent never kills
	for i := 0; time.Now().Before(stop); i++ {
		r := killRecord(i)
		if err := w.Write(&r); err != nil {
			fmt.Println("ERROR", err)
			os.Exit(1)
		}
		// Printed only after the flush returned: the parent may rely on
		// every record counted here being on disk.
		if n := w.Stats().FlushedRecords; n != reported {
			reported = n
			fmt.Printf("FLUSHED %d\n", n)
		}
		time.Sleep(time.Millisecond)
	}
	os.Exit(3)
}

func TestSIGKILL(t *testing.T) {
	if path := os.Getenv(killChildEnv); path != "" {
		killChild(path)
	}
	path := filepath.Join(t.TempDir(), "killed.trace.zst")
	child := testutil.StartChild(t, "TestSIGKILL", killChildEnv+"="+path)
	flushed, flushes := 0, 0
	killed := false
	for n := range child.Reports("FLUSHED ") {
		flushed, _ = strconv.Atoi(n)
		flushes++
		if flushes == 3 && !killed {
			// Kill at a random moment between two flushes.
			time.Sleep(time.Duration(rand.IntN(100)) * time.Millisecond)
			child.Kill()
			killed = true
		}
	}
	if err := child.WaitKilled(); err != nil {
		t.Fatal(err)
	}
	if flushed == 0 {
		t.Fatal("the child reported no flush")
	}

	r := openTest(t, path)
	n := 0
	for r.Scan() {
		want := killRecord(n)
		if d := cmp.Diff(&want, r.Record()); d != "" {
			t.Fatalf("record %d (-want +got):\n%s", n, d)
		}
		n++
	}
	if r.Err() != nil {
		t.Fatalf("the killed run's trace does not read: %v", r.Err())
	}
	if n < flushed {
		t.Fatalf("read %d records, but the child had flushed %d before it was killed", n, flushed)
	}
	t.Logf("child flushed %d records before SIGKILL; the trace holds %d (truncated tail: %v)", flushed, n, r.Truncated())
}
