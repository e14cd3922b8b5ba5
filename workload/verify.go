package workload

import (
	"runtime"
	"sync"

	"github.com/llmreplay/llmreplay/workload/tokenize"
)

// Mismatch is a prompt whose token count under a tokenizer is not the one
// the workload recorded.
type Mismatch struct {
	ID                string
	Counted, Recorded int
}

// Verification is the result of Verify.
type Verification struct {
	Off   []Mismatch // in file order
	Worst int        // the largest |Counted − Recorded|
}

// Verify re-counts every prompt (or the last message's content, for chat)
// under tok, on every core, and reports those whose count differs from
// the recorded InputTokens.
func Verify(wl *Workload, tok tokenize.Tokenizer) Verification {
	reqs := wl.Requests
	counts := make([]int, len(reqs))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r := reqs[i]
				text := r.Prompt
				if len(r.Messages) > 0 {
					text = r.Messages[len(r.Messages)-1].Content
				}
				counts[i] = tok.Count(text)
			}
		}()
	}
	for i := range reqs {
		next <- i
	}
	close(next)
	wg.Wait()
	var v Verification
	for i, r := range reqs {
		if d := counts[i] - r.InputTokens; d != 0 {
			v.Off = append(v.Off, Mismatch{ID: r.ID, Counted: counts[i], Recorded: r.InputTokens})
			v.Worst = max(v.Worst, d, -d)
		}
	}
	return v
}
