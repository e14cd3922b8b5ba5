package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra/doc"
)

// TestCLIReference keeps docs/cli/ (one Markdown page per command, generated
// by cobra/doc from the same command tree the binary runs) current: it
// regenerates the pages and fails when any differs, is missing or is left
// over. `go test ./cmd/llmreplay -run TestCLIReference -update` rewrites them.
func TestCLIReference(t *testing.T) {
	root := NewRootCmd(io.Discard, io.Discard)
	root.DisableAutoGenTag = true // no date line: the pages must be reproducible
	tmp := t.TempDir()
	if err := doc.GenMarkdownTree(root, tmp); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("..", "..", "docs", "cli")
	got := mdFiles(t, tmp)
	if *update {
		os.RemoveAll(dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range got {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	want := mdFiles(t, dir)
	rerun := "go test ./cmd/llmreplay -run TestCLIReference -update"
	for name, b := range got {
		w, ok := want[name]
		switch {
		case !ok:
			t.Errorf("docs/cli/%s is missing (run %s)", name, rerun)
		case !bytes.Equal(w, b):
			t.Errorf("docs/cli/%s is out of date with the command's help (run %s)", name, rerun)
		}
	}
	for name := range want {
		if _, ok := got[name]; !ok {
			t.Errorf("docs/cli/%s documents a command that no longer exists (run %s)", name, rerun)
		}
	}
	if _, ok := got["llmreplay_bench.md"]; !ok {
		t.Errorf("no page for bench among %v", keys(got))
	}
}

func mdFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = b
	}
	return m
}

func keys(m map[string][]byte) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// TestVersionFlag: `llmreplay --version` prints the tool version like the
// version command's first line and exits 0.
func TestVersionFlag(t *testing.T) {
	var out, errb bytes.Buffer
	root := NewRootCmd(&out, &errb)
	root.SetArgs([]string{"--version"})
	if err := root.Execute(); err != nil {
		t.Fatalf("--version: %v (%s)", err, errb.String())
	}
	var vout bytes.Buffer
	v := NewRootCmd(&vout, io.Discard)
	v.SetArgs([]string{"version"})
	if err := v.Execute(); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(vout.String(), "\n")
	if strings.TrimSpace(out.String()) != first || !strings.HasPrefix(first, "llmreplay ") {
		t.Errorf("--version printed %q, the version command's first line is %q", out.String(), first)
	}
}
