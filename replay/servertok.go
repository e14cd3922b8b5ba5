package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmreplay/llmreplay/replay/endpoint"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// The server's own tokenizer. The workload counts prompts, and the
// analysis counts received text, with the workload's tokenizer, which is
// often not the model's: a model whose one-token chunks are Thai words
// streams text that o200k counts as several tokens each. Servers that
// offer tokenization are asked instead, off the timing path: once per
// distinct prompt before the run, and for each response's text after it
// ended, on a client of their own (so the measured requests' connection
// pool never lends a connection to a count), a few at a time, each with a
// timeout. A count that does not come back is recorded as unavailable and
// never fails the run.

// Settings of Config.ServerTokenize.
const (
	ServerTokenizeAuto = "auto" // probe the server once, use it if it answers
	ServerTokenizeOff  = "off"  // never ask
)

// Limits of the counting. They bound what the counts cost the run and the
// server, not what they measure.
const (
	tokProbeTimeout = 5 * time.Second  // the whole probe
	tokTimeout      = 10 * time.Second // one prompt count (a long prompt takes a while)
	tokPromptBudget = 60 * time.Second // all prompt counts together, before the run
	tokPromptConc   = 4                // prompt counts in flight before the run
	tokTextConc     = 2                // response counts in flight during the run
	tokQueue        = 4096             // responses waiting for a count; beyond, not asked
	tokMaxText      = 8 << 20          // longer texts are not sent to be counted
	// A reply larger than this is no count: a 1M-token prompt's id list
	// is about 8 MB of JSON. The probe's reply, for two words, is tiny: a
	// server that answers it with megabytes (one that sends the same
	// endless body to every route) is not a tokenizer.
	tokMaxReply      = 16 << 20
	tokMaxProbeReply = 64 << 10
)

// tokMemoBytes bounds the texts whose counts are kept (serverTok.memo),
// in bytes.
var tokMemoBytes = 8 << 20

// tokTextBudget bounds how long a finished record waits for its text
// count, queue included: the record is written when the count is back, and
// a crash must not lose more than it would without the count (the trace
// flushes every second), so past the budget the record goes without one.
// A tokenizer answers a response's text in milliseconds; a second leaves
// room for a loaded machine. tokGiveUp
// consecutive failures stop the asking for the rest of the run (each
// later response is recorded unavailable at once), so a /tokenize that
// hangs costs three budgets, not one per response. Variables so that a
// test can shorten the wait.
var (
	tokTextBudget = time.Second
	tokGiveUp     = 3
)

// tokItem is a finished record waiting for its text count, and when it
// must be written with or without one.
type tokItem struct {
	rec *trace.Record
	due time.Time
}

// tokFlavour is one server family's /tokenize: the body it takes and how
// its reply gives the count.
type tokFlavour struct {
	name  string // as the trace header records it
	body  func(model, text string) any
	parse func([]byte) (int, error)
}

var (
	// llama.cpp server: {"content": …} → {"tokens": [ids]}. add_special
	// false (its default) counts the text alone, without a BOS token.
	tokLlama = tokFlavour{name: "llamacpp",
		body: func(_, text string) any { return map[string]any{"content": text, "add_special": false} },
		parse: func(b []byte) (int, error) {
			var r struct {
				Tokens *[]json.RawMessage `json:"tokens"`
			}
			if err := json.Unmarshal(b, &r); err != nil || r.Tokens == nil {
				return 0, errors.New(`the reply has no "tokens" list`)
			}
			return len(*r.Tokens), nil
		}}
	// vLLM and SGLang: {"model", "prompt"} → {"count", "tokens", …}.
	tokVLLM = tokFlavour{name: "vllm",
		body: func(model, text string) any {
			return map[string]any{"model": model, "prompt": text, "add_special_tokens": false}
		},
		parse: func(b []byte) (int, error) {
			// The count alone first: decoding the ids as well costs an
			// allocation per token of every response counted during the
			// run (json.RawMessage copies each), a third of the client's
			// allocations in selftest's section 1.
			var c struct {
				Count *int `json:"count"`
			}
			if err := json.Unmarshal(b, &c); err == nil && c.Count != nil {
				return *c.Count, nil
			}
			var r struct {
				Count  *int               `json:"count"`
				Tokens *[]json.RawMessage `json:"tokens"`
			}
			if err := json.Unmarshal(b, &r); err != nil || (r.Count == nil && r.Tokens == nil) {
				return 0, errors.New(`the reply has no "count"`)
			}
			if r.Count != nil {
				return *r.Count, nil
			}
			return len(*r.Tokens), nil
		}}
	// Text Generation Inference: {"inputs": …} → [{"id", "text", …}, …].
	// It has no switch for special tokens: a BOS it adds is within the
	// allowance the analysis gives (docs/METRICS.md).
	tokTGI = tokFlavour{name: "tgi",
		body: func(_, text string) any { return map[string]any{"inputs": text} },
		parse: func(b []byte) (int, error) {
			// Each element must be a token ({"id": …}): a catch-all route
			// that answers any POST with some JSON list is no tokenizer.
			var r []struct {
				ID *int64 `json:"id"`
			}
			if err := json.Unmarshal(b, &r); err != nil {
				return 0, errors.New("the reply is not a list of tokens")
			}
			for _, t := range r {
				if t.ID == nil {
					return 0, errors.New(`the reply's list holds something other than tokens ({"id": …})`)
				}
			}
			return len(r), nil
		}}
)

// tokFlavours is the order the probe tries for an API: the family that
// speaks it first, then the others (an OpenAI-compatible route is served by
// vLLM, SGLang and llama.cpp alike).
func tokFlavours(api string) []tokFlavour {
	switch api {
	case "llamacpp":
		return []tokFlavour{tokLlama, tokVLLM, tokTGI}
	case "tgi":
		return []tokFlavour{tokTGI, tokVLLM, tokLlama}
	default:
		return []tokFlavour{tokVLLM, tokLlama, tokTGI}
	}
}

// serverTok asks one server to count text with its own tokenizer.
type serverTok struct {
	// failed counts consecutive failures of text counts (countTexts);
	// past tokGiveUp the rest of the run is not asked.
	failed atomic.Int32
	client *http.Client
	url    string
	api    string
	key    string
	model  string
	flav   tokFlavour
	scrub  func(string) string
	// memo holds the counts of texts already counted, so a text many
	// responses share (every count-up answer of one length) is asked
	// once: a count is an HTTP round trip of some 90 µs of client CPU,
	// which at one per response was a third of a microsecond per token
	// at 256 streams (selftest's section 1). Exact texts as keys, up to
	// tokMemoBytes of them.
	memoMu    sync.Mutex
	memo      map[string]int
	memoBytes int
}

var (
	// errTokText is a text too long to send for counting.
	errTokText = errors.New("text too long to count")
	// errTokGaveUp: the server's /tokenize failed tokGiveUp times in a row.
	errTokGaveUp = errors.New("the server's tokenizer stopped answering")
)

// count asks the server for the token count of text.
func (s *serverTok) count(ctx context.Context, text string, timeout time.Duration) (int, error) {
	if len(text) > tokMaxText {
		return 0, errTokText
	}
	s.memoMu.Lock()
	n, ok := s.memo[text]
	s.memoMu.Unlock()
	if ok {
		return n, nil
	}
	n, err := s.ask(ctx, s.flav, text, timeout, tokMaxReply)
	if err == nil {
		s.memoMu.Lock()
		if s.memoBytes+len(text) <= tokMemoBytes {
			if s.memo == nil {
				s.memo = map[string]int{}
			}
			if _, ok := s.memo[text]; !ok {
				s.memo[text] = n
				s.memoBytes += len(text)
			}
		}
		s.memoMu.Unlock()
	}
	return n, err
}

func (s *serverTok) ask(ctx context.Context, f tokFlavour, text string, timeout time.Duration, limit int) (int, error) {
	body, err := json.Marshal(f.body(s.model, text))
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	endpoint.AuthHeaders(s.api, req.Header, s.key)
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, errors.New(s.scrub(cleanMessage(err)))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		return 0, errors.New(s.scrub(cleanMessage(err)))
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("HTTP %s", s.scrub(resp.Status))
	}
	if len(b) > limit {
		return 0, fmt.Errorf("the reply is larger than %d KiB", limit>>10)
	}
	n, err := f.parse(b)
	if err != nil {
		return 0, err
	}
	if n < 0 || n > 1<<31-1 {
		return 0, fmt.Errorf("the reply's count %d is no count", n)
	}
	return n, nil
}

// probeText is what the probe asks to count: any tokenizer makes at least
// one token of it.
const probeText = "Hello world"

// probeTokenize finds out whether the server tokenizes, and how: each
// flavour in the API's order, once, until one answers with a count. It
// returns nil and why when none does.
func probeTokenize(ctx context.Context, client *http.Client, base, api, key, model string, scrub func(string) string) (*serverTok, string) {
	s := &serverTok{client: client, url: endpoint.JoinURL(base, "", "/tokenize"), api: api, key: key, model: model, scrub: scrub}
	var why []string
	// One deadline for the whole probe: a server that hangs on /tokenize
	// hangs on every shape, and the run should not wait for each.
	ctx, cancel := context.WithTimeout(ctx, tokProbeTimeout)
	defer cancel()
	for _, f := range tokFlavours(api) {
		n, err := s.ask(ctx, f, probeText, tokProbeTimeout, tokMaxProbeReply)
		if err == nil && n > 0 {
			s.flav = f
			return s, ""
		}
		if err == nil {
			err = errors.New("a count of 0 for a non-empty text")
		}
		why = append(why, f.name+": "+err.Error())
		if ctx.Err() != nil {
			break
		}
	}
	return nil, "POST /tokenize did not answer (" + strings.Join(why, "; ") + ")"
}

// promptText is the text a request's InputTokens counts: the prompt, or
// the last message's content.
func promptText(r *workload.Request) string {
	if len(r.Messages) > 0 {
		return r.Messages[len(r.Messages)-1].Content
	}
	return r.Prompt
}

// countPrompts asks the server to count every distinct prompt of reqs (as
// sent: salted with salt), tokPromptConc at a time, within tokPromptBudget.
// It returns each request index's count (TokenizeUnavailable where none
// came back) and how many distinct prompts were counted.
func (s *serverTok) countPrompts(ctx context.Context, reqs []workload.Request, salt []string) (map[int]int, int, int) {
	byText := map[string][]int{}
	var order []string
	for i := range reqs {
		r := reqs[i]
		if len(salt) > 0 {
			r = r.WithSalt(salt)
		}
		t := promptText(&r)
		if _, ok := byText[t]; !ok {
			order = append(order, t)
		}
		byText[t] = append(byText[t], r.Index)
	}
	ctx, cancel := context.WithTimeout(ctx, tokPromptBudget)
	defer cancel()
	out := make(map[int]int, len(reqs))
	var mu sync.Mutex
	counted := 0
	work := make(chan string)
	var wg sync.WaitGroup
	defer s.failed.Store(0) // the responses' counts get their own chances
	for w := 0; w < tokPromptConc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range work {
				// The same give-up as for texts: a tokenizer that fails
				// tokGiveUp prompts in a row is not asked for the rest.
				n, err := 0, errTokGaveUp
				if int(s.failed.Load()) < tokGiveUp {
					n, err = s.count(ctx, t, tokTimeout)
					if err != nil {
						s.failed.Add(1)
					} else {
						s.failed.Store(0)
					}
				}
				if err != nil {
					n = trace.TokenizeUnavailable
				}
				mu.Lock()
				if err == nil {
					counted++
				}
				for _, i := range byText[t] {
					out[i] = n
				}
				mu.Unlock()
			}
		}()
	}
	for _, t := range order {
		if ctx.Err() != nil {
			break
		}
		work <- t
	}
	close(work)
	wg.Wait()
	for _, t := range order {
		for _, i := range byText[t] {
			if _, ok := out[i]; !ok {
				out[i] = trace.TokenizeUnavailable
			}
		}
	}
	return out, counted, len(order)
}

// receivedText is what a response's usage counts: its reasoning, then its
// text, joined.
func receivedText(rec *trace.Record) string {
	n := 0
	for i := range rec.Chunks {
		n += len(rec.Chunks[i].Reasoning) + len(rec.Chunks[i].Text)
	}
	if n == 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(n)
	for i := range rec.Chunks {
		b.WriteString(rec.Chunks[i].Reasoning)
	}
	for i := range rec.Chunks {
		b.WriteString(rec.Chunks[i].Text)
	}
	return b.String()
}

// startServerTokenize probes the server's tokenizer and counts the
// workload's distinct prompts with it, before the run clock starts (the
// counting takes the server's time, not the run's).
func (e *engine) startServerTokenize(ctx context.Context) {
	// Its answers are counts, not timed: its connections read without
	// kernel stamps (a recvmsg coroutine per connection for nothing).
	tc := e.cfg
	tc.Timestamps = TimestampsUser
	c := newClient(tc, tokPromptConc)
	s, why := probeTokenize(ctx, c, e.base, e.ep.Name(), e.cfg.APIKey, e.opts.Model, e.scrub)
	if s == nil {
		c.CloseIdleConnections()
		e.sum.ServerTokenize = "unavailable: " + why
		return
	}
	e.stok = s
	e.sum.ServerTokenize = s.flav.name
	e.promptCounts, e.sum.PromptsCounted, e.sum.PromptsDistinct = s.countPrompts(ctx, e.cfg.Workload.Requests, e.salt)
	if e.cfg.StartAt.IsZero() {
		e.start = time.Now()
		e.startUnix = e.start.UnixNano()
	}
}

// queueRecord hands a finished record on: through a text count first when
// the server tokenizes and the response has text, else straight to the
// sinks. It never blocks the request's goroutine (a closed-loop worker
// sends its next request only after this returns): past tokQueue waiting
// records, a response is not asked.
func (e *engine) queueRecord(rec *trace.Record) {
	if e.tokq != nil && !rec.Warmup && rec.Error == nil && hasText(rec) {
		select {
		case e.tokq <- tokItem{rec: rec, due: time.Now().Add(tokTextBudget)}:
			return
		default:
			e.mu.Lock()
			e.sum.TextsSkipped++
			e.mu.Unlock()
		}
	}
	e.records <- rec
}

func hasText(rec *trace.Record) bool {
	for i := range rec.Chunks {
		if rec.Chunks[i].Text != "" || rec.Chunks[i].Reasoning != "" {
			return true
		}
	}
	return false
}

// countTexts asks the server to count each queued response's text, then
// passes the record on. A stopped run's pending counts end with the
// in-flight requests (reqCtx), their records kept without a count.
func (e *engine) countTexts() {
	defer e.tokWG.Done()
	for it := range e.tokq {
		rec := it.rec
		n, err := 0, errTokGaveUp
		left := time.Until(it.due)
		late := left <= 0 // waited its whole budget in the queue: not asked
		if !late && int(e.stok.failed.Load()) < tokGiveUp {
			n, err = e.stok.count(e.reqCtx, receivedText(rec), left)
			if err != nil {
				e.stok.failed.Add(1)
			} else {
				e.stok.failed.Store(0)
			}
		}
		e.mu.Lock()
		if late {
			n = 0
			e.sum.TextsSkipped++
		} else if err != nil {
			n = trace.TokenizeUnavailable
			e.sum.TextsUnavailable++
		} else {
			e.sum.TextsCounted++
		}
		e.mu.Unlock()
		rec.ServerTextTokens = n
		e.records <- rec
	}
}

// TokenizeLine says in one line what came of asking the server's
// tokenizer, for the end of a run.
func (s *Summary) TokenizeLine() string {
	switch {
	case s.ServerTokenize == ServerTokenizeOff:
		return "off"
	case strings.HasPrefix(s.ServerTokenize, "unavailable: "):
		why := strings.TrimPrefix(s.ServerTokenize, "unavailable: ")
		if len(why) > 200 {
			why = why[:200] + "…"
		}
		return "none (" + why + "); usage is judged against bounds that need no tokenizer"
	}
	line := fmt.Sprintf("%s /tokenize counted %d of %d distinct prompts and %d responses", s.ServerTokenize, s.PromptsCounted, s.PromptsDistinct, s.TextsCounted)
	if s.TextsUnavailable > 0 {
		line += fmt.Sprintf(" (%d got no count)", s.TextsUnavailable)
	}
	if s.TextsSkipped > 0 {
		line += fmt.Sprintf(" (%d not asked: the tokenizer fell behind)", s.TextsSkipped)
	}
	return line
}
