package filekind

import (
	"strings"
	"testing"
)

// kindCase is a file's first bytes and the kind they are.
type kindCase struct {
	bytes string
	want  Kind
}

// checkKinds holds of, named name, to every case.
func checkKinds(t *testing.T, name string, of func([]byte) Kind, cases []kindCase) {
	t.Helper()
	for _, c := range cases {
		if got := of([]byte(c.bytes)); got != c.want {
			t.Errorf("%s(%q) = %q, want %q", name, c.bytes, got, c.want)
		}
	}
}

func TestOfRaw(t *testing.T) {
	checkKinds(t, "OfRaw", OfRaw, []kindCase{
		{"", Empty},
		{"\x28\xb5\x2f\xfd\x00", Zstd},
		{"\x50\x2a\x4d\x18\x00", Zstd}, // a skippable frame
		{"PAR1\x15", Parquet},
		{"\n<!DOCTYPE html>\n<html>", HTML},
		{"<html lang=en>", HTML},
		{"  {\"model\":{}}", JSON},
		{"[1,2]", JSON},
		{"id,value\n1,2\n", Other},
		{"\x1f\x8b\x08", Other}, // gzip
	})
}

func TestOfContent(t *testing.T) {
	checkKinds(t, "OfContent", OfContent, []kindCase{
		{"llmreplay-trace\x01\x06", Trace},
		{"llmreplay-workload 1.3\n", Workload},
		{"llmreplay-workl", Workload}, // as far as a trace reader reads
		{`{"version":"1.0"}`, JSON},
		{"hello", Zstd},
		{"", Zstd},
	})
}

// Every mismatch names what the file is and, for the pipeline's two
// files, the command that takes it, with the path when known.
func TestMismatchWords(t *testing.T) {
	for _, c := range []struct {
		m    Mismatch
		want string
	}{
		{Mismatch{Path: "w.workload.zst", Got: Workload, Want: Trace}, "'llmreplay replay w.workload.zst --url URL'"},
		{Mismatch{Got: Workload, Want: Trace}, "'llmreplay replay FILE --url URL'"},
		{Mismatch{Path: "t.trace.zst", Got: Trace, Want: Workload}, "'llmreplay analyze t.trace.zst'"},
		{Mismatch{Got: Parquet, Want: Trace}, "Parquet table (what export writes)"},
		{Mismatch{Got: HTML, Want: Workload}, "HTML page (what report writes)"},
		{Mismatch{Got: Other, Want: Trace}, "not zstd-compressed"},
		{Mismatch{Got: Other, Want: Workload}, "not zstd-compressed"},
	} {
		if got := c.m.Error(); !strings.Contains(got, c.want) {
			t.Errorf("%+v: %q lacks %q", c.m, got, c.want)
		}
	}
}
