// Package procwatch samples a local server process while a run goes on:
// its resident memory, CPU time and threads (with those of the processes
// it started: vLLM's engine runs in a child), and the GPUs' memory when
// nvidia-smi is installed. Each sample is a trace.Scrape of source
// "process", stored beside the server's /metrics scrapes. Linux is read
// from /proc (prometheus/procfs); elsewhere (macOS) through ps, without a
// thread count; without either, New says so.
package procwatch

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/llmreplay/llmreplay/trace"
)

// Watcher samples one process and, optionally, the GPUs.
type Watcher struct {
	pid  int
	name string
	// smi is nvidia-smi's path, "" when it is not installed.
	smi string
	// tree is the process and its descendants, refreshed every
	// treeEvery samples (finding descendants reads every process's stat;
	// reading the known ones is cheap).
	tree    []int
	samples int
	gpu     []trace.Sample // the last GPU reading, refreshed every gpuEvery samples
}

const (
	treeEvery = 4
	// gpuEvery: nvidia-smi takes tens of milliseconds of CPU a call, on
	// the machine whose cores the timing loop needs.
	gpuEvery = 4
)

// New checks that pid can be watched and returns its watcher.
func New(pid int) (*Watcher, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("%d is not a process id", pid)
	}
	name, err := procName(pid)
	if err != nil {
		return nil, err
	}
	w := &Watcher{pid: pid, name: name}
	if p, err := exec.LookPath("nvidia-smi"); err == nil {
		w.smi = p
	}
	return w, nil
}

// Target is what the trace records for the process: "pid N (name)".
func (w *Watcher) Target() string { return fmt.Sprintf("pid %d (%s)", w.pid, w.name) }

// GPU reports whether GPU memory is sampled (nvidia-smi was found).
func (w *Watcher) GPU() bool { return w.smi != "" }

// Sample reads the process now. A process that has exited gives a failed
// scrape saying so, never an error: the run goes on.
func (w *Watcher) Sample(ctx context.Context, now func() int64) trace.Scrape {
	s := trace.Scrape{Source: trace.SourceProcess, Target: w.Target(), T: now()}
	if w.samples%treeEvery == 0 {
		w.tree = descendants(w.pid)
	}
	own, tree, err := readTree(w.pid, w.tree)
	if err != nil {
		s.Error = err.Error()
	} else {
		s.Samples = append(s.Samples,
			trace.Sample{Name: "process_resident_memory_bytes", Value: own.rss},
			trace.Sample{Name: "process_virtual_memory_bytes", Value: own.vms},
			trace.Sample{Name: "process_cpu_seconds_total", Value: own.cpu},
			trace.Sample{Name: "process_threads", Value: own.threads},
			trace.Sample{Name: "process_tree_resident_memory_bytes", Value: tree.rss},
			trace.Sample{Name: "process_tree_cpu_seconds_total", Value: tree.cpu},
			trace.Sample{Name: "process_tree_threads", Value: tree.threads},
			trace.Sample{Name: "process_tree_processes", Value: float64(tree.n)},
		)
	}
	if w.smi != "" && err == nil {
		// A failed nvidia-smi call leaves the GPU samples out of this
		// scrape; the process's figures stand.
		if w.samples%gpuEvery == 0 {
			w.gpu = w.readGPU(ctx)
		}
		s.Samples = append(s.Samples, w.gpu...)
	}
	w.samples++
	s.Duration = now() - s.T
	return s
}

// usage is one process's (or a tree's) figures.
type usage struct {
	rss, vms, cpu, threads float64
	n                      int
}

// readGPU asks nvidia-smi for every GPU's memory in use (MiB).
func (w *Watcher) readGPU(ctx context.Context) []trace.Sample {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, w.smi, "--query-gpu=index,memory.used", "--format=csv,noheader,nounits").Output()
	if err != nil {
		return nil
	}
	var samples []trace.Sample
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		f := strings.Split(string(line), ",")
		if len(f) != 2 {
			continue
		}
		idx := strings.TrimSpace(f[0])
		mib, err := strconv.ParseFloat(strings.TrimSpace(f[1]), 64)
		if err != nil || mib < 0 || len(idx) > 8 {
			continue
		}
		samples = append(samples, trace.Sample{Name: "gpu_memory_used_bytes", Labels: `gpu="` + idx + `"`, Value: mib * (1 << 20)})
	}
	return samples
}
