package llmreplay_test

// The layers of docs/ARCHITECTURE.md, checked: every import of a product
// package must run down the layers, or along one of the few edges that the
// table names inside a layer. A package missing from the table fails the
// test, so a new package is placed on purpose, not by accident.

import (
	"go/build"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/llmreplay/llmreplay/"

// layers, top to bottom. The number is the layer's rank: an import must go
// to a strictly higher number, unless the pair is in sideways.
var layers = map[string]int{
	// 1. the binary: flags → a package's Config → one call → print.
	"cmd/llmreplay": 1,
	// 2. orchestrators: each combines the pipeline for one job.
	"bench": 2, "selftest": 2, "capacity/live": 2, "probe": 2, "kube": 2,
	"capacity": 2,
	// 3. the pipeline: send (replay and its adapters), serve (sim, beside
	// replay, not part of it), measure (analyze and its clients).
	"replay": 3, "replay/endpoint": 3, "replay/progress": 3, "sim": 3,
	"analyze": 3, "analyze/claim": 3, "analyze/render": 3, "analyze/report": 3,
	"export": 3, "trace/inspect": 3,
	// 4. side readers the pipeline uses: a server's /metrics, a process.
	"servermetrics": 4, "procwatch": 4,
	// 5. formats and parsers: what is written to disk and read off the wire.
	"trace": 5, "trace/tracetest": 5, "workload": 5, "workload/tokenize": 5, "replay/stream": 5,
	// 6. ground: helpers that import no product package.
	"internal/atomicfile": 6, "internal/cli": 6, "internal/complete": 6, "internal/cputime": 6, "internal/fielderr": 6, "internal/filekind": 6,
	"internal/golden": 6, "internal/jsontext": 6, "internal/outfile": 6, "internal/safetext": 6,
	"internal/suggest": 6, "internal/testutil": 6, "internal/version": 6,
}

// sideways lists the imports allowed inside one layer: a package and the
// core it is a client of.
var sideways = map[[2]string]bool{
	{"capacity/live", "capacity"}:         true,
	{"replay", "replay/endpoint"}:         true,
	{"replay/progress", "replay"}:         false, // not allowed: the display reads records, not the engine
	{"analyze/claim", "analyze"}:          true,
	{"analyze/render", "analyze"}:         true,
	{"analyze/report", "analyze"}:         true,
	{"analyze/report", "analyze/render"}:  true,
	{"export", "analyze"}:                 true,
	{"workload", "workload/tokenize"}:     true,
	{"trace/tracetest", "trace"}:          true,
	{"internal/cli", "internal/fielderr"}: true, // the command line's words for a field error
	{"internal/cli", "internal/suggest"}:  true, // "did you mean" for a flag or command
}

func TestImportsRunDownTheLayers(t *testing.T) {
	var dirs []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "docs" || name == "traces") {
			return filepath.SkipDir
		}
		dirs = append(dirs, path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		pkg, err := build.ImportDir(dir, build.ImportComment)
		if err != nil {
			continue // no Go files here (or only this test's package at the root)
		}
		if dir == "." {
			continue
		}
		from := filepath.ToSlash(dir)
		rank, ok := layers[from]
		if !ok {
			t.Errorf("%s: not in the layers of docs/ARCHITECTURE.md; add it to architecture_test.go's table at its layer", from)
			continue
		}
		if pkg.Doc == "" {
			t.Errorf("%s: no package doc comment saying its one job and what it may import", from)
		}
		// Tests may reach up (a package's tests start a simulator, say);
		// only the package itself is held to the layers.
		for _, imp := range pkg.Imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			to := strings.TrimPrefix(imp, module)
			toRank, ok := layers[to]
			if !ok {
				t.Errorf("%s imports %s, which is not in the layers' table", from, to)
				continue
			}
			switch {
			case toRank > rank:
			case toRank == rank && sideways[[2]string{from, to}]:
			default:
				t.Errorf("%s (layer %d) imports %s (layer %d): an import that runs back up or sideways; move the code to the layer it belongs to (docs/ARCHITECTURE.md)", from, rank, to, toRank)
			}
		}
	}
}
