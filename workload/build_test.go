package workload

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	tiktoken "github.com/tiktoken-go/tokenizer"

	"github.com/llmreplay/llmreplay/workload/tokenize"
)

// The tokenizers every exactness test runs under. The HF files are the
// tokenize package's committed test copies, so these tests run in a fresh
// clone.
var testTokenizers = []string{
	"o200k_base",
	"cl100k_base",
	"tokenize/testdata/qwen3/tokenizer.json.zst",
	"tokenize/testdata/deepseek_v3/tokenizer.json.zst",
}

func loadTok(t testing.TB, spec string) tokenize.Tokenizer {
	t.Helper()
	tok, err := tokenize.Load(spec)
	if err != nil {
		t.Fatalf("loading tokenizer %s: %v", spec, err)
	}
	return tok
}

// referenceCount counts with the upstream tiktoken-go library, a second
// implementation independent of the tokenize package's own BPE, so an
// exactness test cannot pass on a bug shared by Build and Count.
func referenceCount(t testing.TB, name, text string) (int, bool) {
	t.Helper()
	var enc tiktoken.Encoding
	switch name {
	case "o200k_base":
		enc = tiktoken.O200kBase
	case "cl100k_base":
		enc = tiktoken.Cl100kBase
	default:
		return 0, false
	}
	codec, err := tiktoken.Get(enc)
	if err != nil {
		t.Fatal(err)
	}
	n, err := codec.Count(text)
	if err != nil {
		t.Fatal(err)
	}
	return n, true
}

func promptText(r Request) string {
	if len(r.Messages) > 0 {
		return r.Messages[len(r.Messages)-1].Content
	}
	return r.Prompt
}

func TestFillerWordsAreOneToken(t *testing.T) {
	for _, spec := range testTokenizers {
		tok := loadTok(t, spec)
		t.Run(tok.Name(), func(t *testing.T) {
			for _, w := range fillerWords {
				if ids := tok.Encode(" " + w); len(ids) != 1 {
					t.Errorf("%q is %d tokens under %s, want 1", " "+w, len(ids), tok.Name())
				}
			}
			for _, p := range []string{",", "."} {
				if n := tok.Count(p); n != 1 {
					t.Errorf("%q is %d tokens under %s, want 1", p, n, tok.Name())
				}
			}
		})
	}
	seen := map[string]bool{}
	for _, w := range fillerWords {
		if seen[w] {
			t.Errorf("filler word %q is listed twice", w)
		}
		seen[w] = true
	}
	if len(fillerWords) < 300 {
		t.Errorf("only %d filler words; prose needs a few hundred", len(fillerWords))
	}
}

var sweep = []int{64, 65, 100, 257, 800, 1000, 4096, 8000, 32000, 131072}

func TestExactCountSweep(t *testing.T) {
	for _, spec := range testTokenizers {
		tok := loadTok(t, spec)
		ns := sweep
		if tok.Name() == "hf:deepseek_v3" {
			// A fourth vocabulary, checked more briefly: its tokenizer is the
			// slowest under the race detector.
			ns = sweep[:7]
		}
		for _, shape := range []Shape{ShapeCompletion, ShapeChat} {
			t.Run(fmt.Sprintf("%s/%s", tok.Name(), shape), func(t *testing.T) {
				wl, err := Build(BuildConfig{Tok: tok, Shape: shape, InputTokens: ns, Schedule: "burst:1", Repeats: 1, Seed: 7})
				if err != nil {
					t.Fatal(err)
				}
				if len(wl.Requests) != len(ns) {
					t.Fatalf("%d requests, want %d", len(wl.Requests), len(ns))
				}
				for _, r := range wl.Requests {
					if shape == ShapeChat && (r.Prompt != "" || len(r.Messages) != 1 || r.Messages[0].Role != "user") {
						t.Fatalf("chat request %s is not one user message", r.ID)
					}
					if shape == ShapeCompletion && (r.Prompt == "" || len(r.Messages) != 0) {
						t.Fatalf("completion request %s has no raw prompt", r.ID)
					}
					want := wl.Header.Phases[r.Phase].InputTokens
					if got := tok.Count(promptText(r)); got != want || r.InputTokens != want {
						t.Errorf("%s: %d tokens (recorded %d), want %d", r.ID, got, r.InputTokens, want)
					}
					if ref, ok := referenceCount(t, tok.Name(), promptText(r)); ok && ref != want {
						t.Errorf("%s: %d tokens under the upstream tiktoken-go %s, want %d", r.ID, ref, tok.Name(), want)
					}
				}
			})
		}
	}
}

// Every N from the smallest possible upwards, for the prose's edge cases
// (where a sentence ends, where the opening sits).
func TestExactCountEveryN(t *testing.T) {
	tok := loadTok(t, "o200k_base")
	for _, prefix := range []string{"unique", "shared", "shared:40"} {
		mode, _ := parsePrefix(prefix)
		kit, err := newPromptKit(tok, 0, DefaultSaltWords, mode)
		if err != nil {
			t.Fatal(err)
		}
		var ns []int
		for n := kit.minTokens(); n < kit.minTokens()+160; n++ {
			ns = append(ns, n)
		}
		wl, err := Build(BuildConfig{Tok: tok, Shape: ShapeCompletion, InputTokens: ns, Schedule: "burst:1", Repeats: 1, Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range wl.Requests {
			if got := tok.Count(r.Prompt); got != r.InputTokens {
				t.Errorf("%s %s: %d tokens, want %d", prefix, r.ID, got, r.InputTokens)
			}
		}
		if _, err := Build(BuildConfig{Tok: tok, InputTokens: []int{kit.minTokens() - 1}, Prefix: prefix}); err == nil {
			t.Errorf("%s: %d tokens, one below the minimum, was accepted", prefix, kit.minTokens()-1)
		}
	}
}

func TestTooSmallIsClear(t *testing.T) {
	_, err := Build(BuildConfig{InputTokens: []int{20}, Schedule: "burst:1"})
	if err == nil || !strings.Contains(err.Error(), "cannot hold the count-up instruction") || !strings.Contains(err.Error(), "use at least") {
		t.Fatalf("want a 'use at least' error, got %v", err)
	}
}

func TestBadConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  BuildConfig
		want string
	}{
		{"unknown tokenizer", BuildConfig{Tokenizer: "gpt9_base"}, "unknown tokenizer"},
		{"negative length", BuildConfig{InputTokens: []int{-5}}, "BuildConfig.InputTokens -5 is not an input length"},
		{"absurd length", BuildConfig{InputTokens: []int{1 << 30}}, "is not an input length"},
		{"zero output", BuildConfig{MaxTokens: -1}, "BuildConfig.MaxTokens -1 is out of range"},
		{"bad prefix", BuildConfig{Prefix: "shared:x"}, "BuildConfig.Prefix \"shared:x\" is not a prefix mode"},
		{"bad schedule", BuildConfig{Schedule: "storm:3"}, "unknown kind"},
		{"bad level", BuildConfig{Schedule: "burst:0"}, "concurrency level"},
		{"bad rate", BuildConfig{Schedule: "rate:-1"}, "is not a positive rate"},
		{"bad arrival", BuildConfig{Schedule: "rate:2", Arrival: "gamma:-1"}, "gamma:SHAPE"},
		{"arrival without rate", BuildConfig{Schedule: "burst:1", Arrival: "poisson"}, "rate:R schedules only"},
		{"salt", BuildConfig{SaltWords: 1000}, "BuildConfig.SaltWords 1000 is out of range"},
		{"repeats", BuildConfig{Repeats: -2}, "BuildConfig.Repeats -2"},
		{"time scale", BuildConfig{Schedule: "burst:1", TimeScale: -1}, "BuildConfig.TimeScale"},
		{"missing log", BuildConfig{Schedule: "trace:testdata/nope.jsonl"}, "cannot read the request log"},
		{"shared too long", BuildConfig{Prefix: "shared:900"}, "cannot hold"},
		{"shared too short", BuildConfig{Prefix: "shared:2"}, "shorter than the"},
		{"requests for burst", BuildConfig{Schedule: "burst:4", Requests: 9}, "BuildConfig.Requests applies to"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Build(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is more than one line: %q", err)
			}
		})
	}
}

func TestDeterministicBytes(t *testing.T) {
	cfg := BuildConfig{InputTokens: []int{300, 1000}, Schedule: "rate:3", Arrival: "gamma:0.5", Requests: 20, Seed: 42}
	var files [2][]byte
	for i := range files {
		files[i] = encoded(t, mustBuild(t, cfg)).Bytes()
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Fatal("two builds with the same config gave different bytes")
	}
	// Prompts are built on every core; one core must give the same file.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	wl1, err := Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var one bytes.Buffer
	Encode(&one, wl1)
	if !bytes.Equal(one.Bytes(), files[0]) {
		t.Fatal("a build on one core differs from a build on all cores")
	}
	cfg.Seed = 43
	wl, err := Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	Encode(&buf, wl)
	if bytes.Equal(buf.Bytes(), files[0]) {
		t.Fatal("a different seed gave the same file")
	}
}

// commonPrefix is the number of leading token ids a and b share.
func commonPrefix(a, b []int) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func TestPrefixModes(t *testing.T) {
	tok := loadTok(t, "o200k_base")
	build := func(t *testing.T, prefix string) []Request {
		t.Helper()
		wl, err := Build(BuildConfig{Tok: tok, Shape: ShapeCompletion, InputTokens: []int{800}, Schedule: "burst:8", Repeats: 1, Prefix: prefix, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		return wl.Requests
	}
	kit, err := newPromptKit(tok, 3, DefaultSaltWords, prefixMode{kind: "unique"})
	if err != nil {
		t.Fatal(err)
	}
	lead := kit.fixedTokens() - kit.tailTokens // head, salt and its "."

	encodeAll := func(reqs []Request) [][]int {
		ids := make([][]int, len(reqs))
		for i, r := range reqs {
			ids[i] = tok.Encode(r.Prompt)
		}
		return ids
	}
	t.Run("unique", func(t *testing.T) {
		reqs := build(t, "unique")
		ids := encodeAll(reqs)
		for i := range reqs {
			for j := i + 1; j < len(reqs); j++ {
				a, b := ids[i], ids[j]
				if n := commonPrefix(a, b); n != lead {
					t.Errorf("%s and %s share %d leading tokens, want exactly the %d before the opening", reqs[i].ID, reqs[j].ID, n, lead)
				}
			}
		}
	})
	t.Run("shared", func(t *testing.T) {
		reqs := build(t, "shared")
		for _, r := range reqs[1:] {
			if r.Prompt != reqs[0].Prompt {
				t.Fatalf("%s differs from %s under --prefix shared", r.ID, reqs[0].ID)
			}
		}
	})
	for _, k := range []int{lead, 64, 100, 500, 800 - openingWords - kit.tailTokens} {
		t.Run(fmt.Sprintf("shared:%d", k), func(t *testing.T) {
			reqs := build(t, fmt.Sprintf("shared:%d", k))
			ids := encodeAll(reqs)
			for i := range reqs {
				if got := len(ids[i]); got != 800 {
					t.Fatalf("%s: %d tokens", reqs[i].ID, got)
				}
				for j := i + 1; j < len(reqs); j++ {
					a, b := ids[i], ids[j]
					if n := commonPrefix(a, b); n != k {
						t.Errorf("%s and %s share %d leading tokens, want exactly %d", reqs[i].ID, reqs[j].ID, n, k)
					}
				}
			}
		})
	}
}

func TestOpeningsAreDistinct(t *testing.T) {
	tok := loadTok(t, "o200k_base")
	kit, err := newPromptKit(tok, 1, 4, prefixMode{kind: "unique"})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	rng := rand.New(rand.NewPCG(1, 2))
	idx := make([]int, 0, 30000)
	for i := 0; i < 20000; i++ {
		idx = append(idx, i)
	}
	for i := 0; i < 10000; i++ {
		idx = append(idx, 20000+rng.IntN(1<<27))
	}
	for _, i := range idx {
		var b strings.Builder
		kit.opening(&b, i)
		if j, dup := seen[b.String()]; dup && j != i {
			t.Fatalf("requests %d and %d get the same opening %q", j, i, b.String())
		}
		seen[b.String()] = i
	}
}

func TestWithSaltKeepsCount(t *testing.T) {
	for _, spec := range testTokenizers {
		tok := loadTok(t, spec)
		for _, shape := range []Shape{ShapeChat, ShapeCompletion} {
			wl, err := Build(BuildConfig{Tok: tok, Shape: shape, InputTokens: []int{64, 800}, Schedule: "burst:3", Repeats: 1, Seed: 9})
			if err != nil {
				t.Fatal(err)
			}
			for seed := int64(0); seed < 6; seed++ {
				words := SaltWords(seed, DefaultSaltWords)
				for _, r := range wl.Requests {
					before := promptText(r)
					s := r.WithSalt(words)
					text := promptText(s)
					if got := tok.Count(text); got != r.InputTokens {
						t.Fatalf("%s %s salt %v: %d tokens after salting, want %d", tok.Name(), r.ID, words, got, r.InputTokens)
					}
					if promptText(r) != before {
						t.Fatalf("WithSalt changed the original request %s", r.ID)
					}
					if got, want := text[s.Salt.Start:s.Salt.End], " "+strings.Join(words, " "); got != want {
						t.Fatalf("salt span holds %q, want %q", got, want)
					}
					if text[s.Salt.End:] != before[r.Salt.End:] || text[:s.Salt.Start] != before[:r.Salt.Start] {
						t.Fatalf("WithSalt touched text outside the salt span")
					}
				}
			}
		}
	}
}

func TestSaltWords(t *testing.T) {
	a, b := SaltWords(5, 8), SaltWords(5, 8)
	if !slices.Equal(a, b) {
		t.Fatal("SaltWords is not deterministic")
	}
	if slices.Equal(a, SaltWords(6, 8)) {
		t.Fatal("different seeds gave the same salt")
	}
	seen := map[string]bool{}
	for _, w := range SaltWords(1, len(fillerWords)) {
		if seen[w] {
			t.Fatalf("salt word %q repeats before the list is used up", w)
		}
		seen[w] = true
	}
	if len(SaltWords(1, 0)) != 0 {
		t.Fatal("SaltWords(…, 0) should be empty")
	}
	r := Request{Prompt: "abc"}
	if got := r.WithSalt([]string{"x"}); got.Prompt != "abc" {
		t.Fatal("WithSalt on a request without a salt slot must be a no-op")
	}
}

func TestNoSalt(t *testing.T) {
	tok := loadTok(t, "o200k_base")
	wl, err := Build(BuildConfig{Tok: tok, SaltWords: NoSaltWords, Schedule: "burst:2", Repeats: 1, InputTokens: []int{100}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range wl.Requests {
		if r.Salt != (Span{}) || tok.Count(promptText(r)) != 100 {
			t.Fatalf("%s: salt %+v, %d tokens", r.ID, r.Salt, tok.Count(promptText(r)))
		}
	}
	if wl.Header.Params.SaltWords != 0 {
		t.Fatalf("params record %d salt words", wl.Header.Params.SaltWords)
	}
}

func TestReferenceAnswer(t *testing.T) {
	tok := loadTok(t, "o200k_base")
	wl, err := Build(BuildConfig{Tok: tok, MaxTokens: 1000, Schedule: "burst:1", Repeats: 1})
	if err != nil {
		t.Fatal(err)
	}
	ref := wl.Header.Task.Reference
	if !strings.HasPrefix(ref, "1, 2, 3, 4, 5, ") {
		t.Fatalf("reference starts %q", ref[:20])
	}
	if n := tok.Count(ref); n < 1000 {
		t.Fatalf("reference is %d tokens, want at least 1000", n)
	}
	last := ref[strings.LastIndex(ref, ", ")+2:]
	if n := tok.Count(strings.TrimSuffix(ref, ", "+last)); n >= 1000 {
		t.Fatalf("reference is longer than needed (%d tokens without its last number)", n)
	}
}

func TestSchedulePhases(t *testing.T) {
	tok := loadTok(t, "o200k_base")
	t.Run("burst", func(t *testing.T) {
		wl, err := Build(BuildConfig{Tok: tok, InputTokens: []int{100, 200}, Schedule: "burst:1,4", Repeats: 2})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range wl.Header.Phases {
			names = append(names, p.Name)
		}
		want := "burst-c1-in100-r1 burst-c1-in100-r2 burst-c4-in100-r1 burst-c4-in100-r2 burst-c1-in200-r1 burst-c1-in200-r2 burst-c4-in200-r1 burst-c4-in200-r2"
		if strings.Join(names, " ") != want {
			t.Fatalf("phases %v, want %s", names, want)
		}
		if len(wl.Requests) != 2*2*(1+4) {
			t.Fatalf("%d requests", len(wl.Requests))
		}
		for _, r := range wl.Requests {
			p := wl.Header.Phases[r.Phase]
			if r.Slot >= p.Concurrency || r.Offset != 0 || r.InputTokens != p.InputTokens || !r.IgnoreEOS || r.Temperature != 0 || r.MaxTokens != 256 {
				t.Fatalf("bad request %+v in phase %+v", r, p)
			}
		}
	})
	t.Run("closed", func(t *testing.T) {
		wl, err := Build(BuildConfig{Tok: tok, InputTokens: []int{100}, Schedule: "closed:2,3", Requests: 7})
		if err != nil {
			t.Fatal(err)
		}
		if len(wl.Header.Phases) != 2 || len(wl.Requests) != 14 {
			t.Fatalf("%d phases, %d requests", len(wl.Header.Phases), len(wl.Requests))
		}
		for _, r := range wl.Requests {
			p := wl.Header.Phases[r.Phase]
			if want := (r.Index - 7*r.Phase) % p.Concurrency; r.Slot != want {
				t.Fatalf("%s slot %d, want %d", r.ID, r.Slot, want)
			}
		}
	})
}
