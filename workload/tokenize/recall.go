package tokenize

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Recall loads the tokenizer a workload or trace was made with, from what
// the file recorded: a built-in encoding by its name; a tokenizer.json from
// the path recorded when the workload was built, when that file is still
// there and its digest is the recorded one. override, when not empty, is
// used instead (a different tokenizer on purpose, or the same file moved).
//
// It returns the tokenizer and, for the user, where it came from: "" for a
// built-in encoding, else the file used. A tokenizer that cannot be
// recalled is an error that says why in one line.
func Recall(name, path, digest, override string) (Tokenizer, string, error) {
	if override != "" {
		t, err := Load(override)
		if err != nil {
			return nil, "", err
		}
		return t, sourceOf(override), nil
	}
	if name == "" {
		return nil, "", errors.New("no tokenizer is recorded")
	}
	if !strings.HasPrefix(name, "hf:") {
		// A built-in encoding, recorded by its name.
		t, err := Load(name)
		return t, "", err
	}
	if path == "" {
		return nil, "", fmt.Errorf("made with the tokenizer.json %s, whose path was not recorded (an older file): give it", name)
	}
	if _, err := os.Stat(path); err != nil {
		return nil, "", fmt.Errorf("made with the tokenizer.json %s recorded at %s, which is gone: give it", name, path)
	}
	t, err := Load(path)
	if err != nil {
		return nil, "", fmt.Errorf("the recorded tokenizer %s: %v", path, err)
	}
	if digest != "" && t.Digest() != digest {
		return nil, "", fmt.Errorf("the tokenizer.json at %s has changed since (%s, recorded %s): give the one it was made with", path, t.Digest(), digest)
	}
	return t, path, nil
}

// RecordedPath is what a workload records of a tokenizer spec: the
// absolute path of a tokenizer.json (for a model id, the cache's file), so later commands run from another
// folder find it; "" for a built-in encoding.
func RecordedPath(spec string) string {
	if spec == "" || isTiktokenName(spec) {
		return ""
	}
	if r, err := Resolve(spec); err == nil {
		spec = r.Path // a model id: its file in the hub cache
	}
	if abs, err := filepath.Abs(spec); err == nil {
		return abs
	}
	return spec
}

func sourceOf(spec string) string {
	if isTiktokenName(spec) || strings.TrimSpace(spec) == "" {
		return ""
	}
	if r, err := Resolve(spec); err == nil {
		return r.Path
	}
	return spec
}
