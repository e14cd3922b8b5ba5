package workload

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// mustBuild builds cfg, failing the test on an error.
func mustBuild(t testing.TB, cfg BuildConfig) *Workload {
	t.Helper()
	wl, err := Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return wl
}

// encoded is wl in the file format, failing the test on an error.
func encoded(t testing.TB, wl *Workload) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	if err := Encode(&buf, wl); err != nil {
		t.Fatal(err)
	}
	return &buf
}

// openGolden opens a committed golden workload, which -update first
// rewrites from the command cfg.
func openGolden(t *testing.T, path string, cfg BuildConfig) *Workload {
	t.Helper()
	if *update {
		if err := Create(path, mustBuild(t, cfg)); err != nil {
			t.Fatal(err)
		}
	}
	wl, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return wl
}

// rebuildsGolden fails unless today's builder makes the golden's content
// from the same command cfg, and returns that fresh build. The tool
// version is the one field allowed to differ.
func rebuildsGolden(t *testing.T, golden *Workload, cfg BuildConfig, what string) *Workload {
	t.Helper()
	fresh := mustBuild(t, cfg)
	fresh.Header.ToolVersion = golden.Header.ToolVersion
	if diff := cmp.Diff(golden, fresh); diff != "" {
		t.Fatalf("the builder no longer reproduces the golden %s (-golden +now):\n%s", what, diff)
	}
	return fresh
}
