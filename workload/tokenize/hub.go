package tokenize

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/llmreplay/llmreplay/internal/fielderr"
)

// People name a model's tokenizer the way they name the model: by its
// Hugging Face id, Qwen/Qwen3-8B. A spec of that form that is not a file
// is looked up, offline, in the local Hugging Face hub cache, where
// `huggingface-cli download` (and every transformers or vLLM run) keeps
// it: CACHE/models--ORG--NAME/snapshots/REV/tokenizer.json, REV being the
// revision refs/main names. Nothing is downloaded: the tool never reaches
// the network for a tokenizer.

// modelID matches a Hugging Face repository id: an owner and a name of
// letters, digits, '-', '_' and '.', at most 96 characters in all.
var modelID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$`)

// IsModelID reports whether spec reads as a Hugging Face model id
// (ORG/NAME) rather than the path of a file: it has that form, names no
// .json file and no file or folder is there.
func IsModelID(spec string) bool {
	if len(spec) > 96 || !modelID.MatchString(spec) || strings.HasSuffix(spec, ".json") || strings.HasSuffix(spec, ".zst") {
		return false
	}
	_, err := os.Stat(spec)
	return errors.Is(err, os.ErrNotExist)
}

// HubCache is the folder of the Hugging Face hub cache and why it is
// that one, as huggingface_hub decides it: HF_HUB_CACHE; else
// HF_HOME/hub; else XDG_CACHE_HOME/huggingface/hub; else
// ~/.cache/huggingface/hub.
func HubCache() (dir, why string) {
	if d := os.Getenv("HF_HUB_CACHE"); d != "" {
		return d, "HF_HUB_CACHE"
	}
	if d := os.Getenv("HF_HOME"); d != "" {
		return filepath.Join(d, "hub"), "HF_HOME/hub"
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "huggingface", "hub"), "XDG_CACHE_HOME/huggingface/hub"
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join("~", ".cache", "huggingface", "hub"), "the default"
	}
	return filepath.Join(home, ".cache", "huggingface", "hub"), "the default"
}

// Resolved is what a --tokenizer spec stands for.
type Resolved struct {
	Spec string // as given
	// Path is the file to load: the spec itself unless it is a model id.
	Path string
	// From says, for a model id, which file of the cache was used and
	// why ("the Hugging Face cache's main revision 0123abc"); "" otherwise.
	From string
}

// Resolve turns a tokenizer spec into what Load reads: a built-in
// encoding's name and a path stay as they are; a Hugging Face model id
// becomes the tokenizer.json of the cache's main revision. A model id the
// cache does not hold is an error naming the folders looked in and the
// command that downloads it.
func Resolve(spec string) (Resolved, error) {
	r := Resolved{Spec: spec, Path: spec}
	if isTiktokenName(spec) || !IsModelID(spec) {
		return r, nil
	}
	cache, why := HubCache()
	org, name, _ := strings.Cut(spec, "/")
	repo := filepath.Join(cache, "models--"+org+"--"+name)
	download := fmt.Sprintf("download it with 'huggingface-cli download %s tokenizer.json' (or 'hf download %s tokenizer.json'), or give the path of a tokenizer.json", spec, spec)
	if st, err := os.Stat(repo); err != nil || !st.IsDir() {
		return r, hubErr(fmt.Sprintf("%q is no file, and the Hugging Face cache (%s, from %s) does not hold it: looked for %s",
			spec, cache, why, filepath.Join(repo, "snapshots", "REV", "tokenizer.json")), download)
	}
	ref := filepath.Join(repo, "refs", "main")
	if b, err := os.ReadFile(ref); err == nil {
		rev := strings.TrimSpace(string(b))
		p := filepath.Join(repo, "snapshots", rev, "tokenizer.json")
		if rev == "" || strings.ContainsAny(rev, `/\`) || rev == "." || rev == ".." {
			return r, hubErr(fmt.Sprintf("%q: %s does not name a revision (%q): the cache is damaged", spec, ref, rev), download)
		}
		if _, err := os.Stat(p); err != nil {
			return r, hubErr(fmt.Sprintf("%q: the Hugging Face cache's main revision of it (%s, named by %s) has no tokenizer.json: looked for %s",
				spec, short(rev), ref, p), download)
		}
		r.Path, r.From = p, fmt.Sprintf("the Hugging Face cache's main revision %s", short(rev))
		return r, nil
	}
	// No refs/main (a download of one revision by its hash): the only
	// snapshot holding a tokenizer.json, when there is one.
	found, _ := filepath.Glob(filepath.Join(repo, "snapshots", "*", "tokenizer.json"))
	sort.Strings(found)
	switch len(found) {
	case 0:
		return r, hubErr(fmt.Sprintf("%q: the Hugging Face cache holds %s but no tokenizer.json of it: looked for %s and %s",
			spec, repo, ref, filepath.Join(repo, "snapshots", "*", "tokenizer.json")), download)
	case 1:
		rev := filepath.Base(filepath.Dir(found[0]))
		r.Path, r.From = found[0], fmt.Sprintf("the Hugging Face cache's only revision %s (no refs/main)", short(rev))
		return r, nil
	}
	return r, hubErr(fmt.Sprintf("%q: the Hugging Face cache holds %d revisions of it and no refs/main to choose one", spec, len(found)),
		"give the path of the tokenizer.json, e.g. "+found[0])
}

// hubErr is a model id the cache cannot give: an error of the Tokenizer
// setting, which the CLI names by its flag.
func hubErr(problem, fix string) error {
	return fielderr.New("tokenize", "Tokenizer", problem, fix)
}

// short is a revision hash as git shows it.
func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// hubName is ORG/NAME when path is a tokenizer.json inside the hub
// cache (…/models--ORG--NAME/snapshots/REV/tokenizer.json), else "".
func hubName(path string) string {
	snap := filepath.Dir(path)
	repo := filepath.Dir(filepath.Dir(snap))
	if filepath.Base(filepath.Dir(snap)) != "snapshots" {
		return ""
	}
	id, ok := strings.CutPrefix(filepath.Base(repo), "models--")
	org, name, ok2 := strings.Cut(id, "--")
	if !ok || !ok2 || org == "" || name == "" {
		return ""
	}
	return org + "/" + name
}
