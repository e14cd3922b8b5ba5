package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/trace"
)

// refused fails the test unless the run was refused as bad input: exit 2,
// nothing on stdout, one line on stderr containing every want.
func refused(t *testing.T, what, out, errs string, code int, want ...string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	ok := code == 2 && out == "" && len(lines) == 1
	for _, w := range want {
		ok = ok && strings.Contains(errs, w)
	}
	if !ok {
		t.Errorf("%s: exit %d, stdout %.200q, stderr %q; want exit 2 and one line with %q", what, code, out, errs, want)
	}
}

// noTemps fails the test if dir holds anything but the names in keep: a
// refused or stopped run must leave no file, not even a temporary one.
func noTemps(t *testing.T, dir string, keep ...string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if !strings.Contains(strings.Join(keep, "\x00")+"\x00", e.Name()+"\x00") {
			t.Errorf("%s was left in %s", e.Name(), dir)
		}
	}
}

// selftestQuick is the fastest selftest that still runs: the CI scale, the
// trace-size section, a short noise measurement.
var selftestQuick = []string{"selftest", "--short", "--section", "5", "--floor-wakeups", "10"}

// TestSelftestCPUProfileNeverOverwrites: --cpuprofile refuses an existing
// file (one line naming the fix, exit 2, the file untouched, nothing
// measured), and --force replaces it with a profile go tool pprof reads.
func TestSelftestCPUProfileNeverOverwrites(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	prof := filepath.Join(dir, "client.pprof")
	if err := os.WriteFile(prof, []byte("my own file"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := runCap(t, bin, append(selftestQuick, "--cpuprofile", prof)...)
	refused(t, "existing --cpuprofile", out, errs, code, "--cpuprofile", prof, "exists", "--force")
	if b, _ := os.ReadFile(prof); string(b) != "my own file" {
		t.Errorf("the existing file was changed: %.60q", b)
	}
	noTemps(t, dir, "client.pprof")

	// The profile and the table are different outputs: one name for both
	// would lose one of them.
	out, errs, code = runCap(t, bin, append(selftestQuick, "--cpuprofile", prof, "-o", prof, "--force")...)
	refused(t, "--cpuprofile same as -o", out, errs, code, "--cpuprofile", "-o", "another name")

	if _, errs, code := runCap(t, bin, append(selftestQuick, "--cpuprofile", prof, "--force")...); code != 0 {
		t.Fatalf("--force: exit %d: %s", code, errs)
	}
	// A CPU profile is gzip-compressed protobuf.
	if b, _ := os.ReadFile(prof); len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("--force did not write a profile: %.40q", b)
	}
	noTemps(t, dir, "client.pprof")
}

// selftestMeasuring starts a selftest made far longer than any test
// (1,000 runs of section 5) with args added, and returns once its first
// progress line shows it measuring, with the scanner of the rest of its
// stderr.
func selftestMeasuring(t *testing.T, bin string, args ...string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"selftest", "--short", "--section", "5", "--floor-wakeups", "10", "--repeat", "1000"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() && !strings.Contains(sc.Text(), "5. trace size") {
	}
	return cmd, sc
}

// TestSelftestStoppedLeavesNoProfile: a selftest stopped by Ctrl-C leaves
// no profile, whole or half, and no temporary file beside it. The run is
// made far longer than the test (1,000 runs) and interrupted once its first
// progress line shows it measuring, so the signal always comes mid-run.
func TestSelftestStoppedLeavesNoProfile(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	prof := filepath.Join(dir, "client.pprof")
	cmd, sc := selftestMeasuring(t, bin, "--cpuprofile", prof)
	interruptSelftest(t, cmd, sc)
	noTemps(t, dir)
}

// TestSelftestOutputsClaimed: a running selftest holds its -o and
// --cpuprofile names from the start, so a second one started meanwhile
// with the same names is refused (exit 2, one line) instead of having its
// outputs replaced when the first ends; the first, stopped, leaves
// neither name behind. The first is made far longer than the test and
// checked once it is measuring.
func TestSelftestOutputsClaimed(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	table, prof := filepath.Join(dir, "table.txt"), filepath.Join(dir, "client.pprof")
	cmd, sc := selftestMeasuring(t, bin, "-o", table, "--cpuprofile", prof)
	defer cmd.Process.Kill()
	out, errs, code := runCap(t, bin, append(selftestQuick, "-o", table)...)
	refused(t, "-o held by a running selftest", out, errs, code, table, "exists", "--force")
	out, errs, code = runCap(t, bin, append(selftestQuick, "--cpuprofile", prof)...)
	refused(t, "--cpuprofile held by a running selftest", out, errs, code, "--cpuprofile", prof, "exists", "--force")
	interruptSelftest(t, cmd, sc)
	noTemps(t, dir)
}

// TestSelftestRepeatZero: --repeat takes 1 or more runs; 0 (which the
// library reads as its default) and negative counts are bad input.
func TestSelftestRepeatZero(t *testing.T) {
	bin := parallelBinary(t)
	for _, n := range []string{"0", "-1"} {
		out, errs, code := runCap(t, bin, append(selftestQuick, "--repeat", n)...)
		refused(t, "--repeat "+n, out, errs, code, "--repeat "+n, "give 1 or more runs")
	}
}

var sectionHead = regexp.MustCompile(`(?m)^(\d)\. `)

// TestSelftestSectionOnly: --section prints the sections asked for and no
// other (0, the machine's noise floor, comes with every run): asked for 1
// and 5, it prints 0, 1 and 5, none of 2, 3, 4 and 6 (one run proves
// both; a second with --section 1 alone only repeated section 1's
// measurement). Section 1's traces are sized as section 5's comparison
// rows when section 5 is asked for too.
func TestSelftestSectionOnly(t *testing.T) {
	bin := parallelBinary(t)
	for _, tc := range []struct {
		sections string
		want     string
	}{{"1,5", "015"}} {
		out, errs, code := runCap(t, bin, "selftest", "--short", "--floor-wakeups", "10", "--section", tc.sections)
		if code != 0 {
			t.Fatalf("--section %s: exit %d: %s", tc.sections, code, errs)
		}
		got := ""
		for _, m := range sectionHead.FindAllStringSubmatch(out, -1) {
			got += m[1]
		}
		if got != tc.want {
			t.Errorf("--section %s printed sections %q, want %q:\n%s", tc.sections, got, tc.want, out)
		}
		if tc.sections == "1,5" && !strings.Contains(out, "send times on") {
			t.Errorf("--section 1,5: section 5 lacks section 1's traces:\n%s", out)
		}
	}
}

// benchQuick is the shortest bench on the simulator: one level, one run,
// a few tokens.
var benchQuick = []string{"bench", "--concurrency", "1", "--repeats", "1", "--max-tokens", "8", "--label", "taken"}

var benchExts = []string{".workload.zst", ".trace.zst", ".md", ".json", ".report.html"}

var benchTraceLine = regexp.MustCompile(`(?m)^trace: (\S+)$`)

// TestBenchDefaultNameTaken: bench's result names are timestamped to the
// second, so a run started in the same second as another finds them
// taken. It takes the next free numbered names and leaves the other
// files alone, whether another run's whole set is there or only one of
// its files (the report, the last bench writes). The names of every
// second around the run are taken beforehand, so the collision happens
// however late the binary starts.
func TestBenchDefaultNameTaken(t *testing.T) {
	bin := parallelBinary(t)
	for _, tc := range []struct {
		name  string
		taken []string
	}{{"whole run", benchExts}, {"report only", []string{".report.html"}}} {
		t.Run(tc.name, func(t *testing.T) {
			results := t.TempDir()
			now := time.Now()
			taken := map[string]bool{}
			for s := -2; s <= 120; s++ {
				stem := filepath.Join(results, trace.RunName("taken", "", "bench", now.Add(time.Duration(s)*time.Second)))
				for _, ext := range tc.taken {
					if err := os.WriteFile(stem+ext, []byte("another run"), 0o644); err != nil {
						t.Fatal(err)
					}
					taken[stem+ext] = true
				}
			}
			_, errs, code := runCap(t, bin, append(benchQuick, "--results", results)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			m := benchTraceLine.FindStringSubmatch(errs)
			if m == nil {
				t.Fatalf("no trace named: %s", errs)
			}
			stem, ok := strings.CutSuffix(m[1], "-2.trace.zst")
			if !ok || !taken[stem+tc.taken[0]] {
				t.Fatalf("trace %s: want the taken name with -2 (start after the taken seconds?)", m[1])
			}
			for _, ext := range benchExts {
				p := stem + "-2" + ext
				if !strings.Contains(errs, p) && ext != ".workload.zst" {
					t.Errorf("the run did not name %s:\n%s", p, errs)
				}
				if st, err := os.Stat(p); err != nil || st.Size() == 0 {
					t.Errorf("%s not written: %v", p, err)
				}
			}
			for p := range taken {
				if b, _ := os.ReadFile(p); string(b) != "another run" {
					t.Errorf("%s was changed", p)
				}
			}
			r, err := trace.Open(m[1])
			if err != nil {
				t.Fatalf("%s: %v", m[1], err)
			}
			r.Close()
		})
	}
}

// TestBenchUnreachableLeavesNothing: a bench whose server cannot be
// reached (no --model, so nothing is measured) is refused in one line with
// exit 2 and leaves nothing under --results: no workload, no claimed
// name, not even the folders it made for them.
func TestBenchUnreachableLeavesNothing(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	for _, results := range []string{dir, filepath.Join(dir, "new", "results")} {
		out, errs, code := runCap(t, bin, "bench", "--url", "http://127.0.0.1:1", "--results", results)
		refused(t, "--results "+results, out, errs, code, "127.0.0.1:1", "start the server")
		noTemps(t, dir)
	}
}

// interruptSelftest stops a running selftest with Ctrl-C (SIGINT), reads
// the rest of its progress and checks that it did not exit 0.
func interruptSelftest(t *testing.T, cmd *exec.Cmd, sc *bufio.Scanner) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
	}
	if err := cmd.Wait(); err == nil {
		t.Error("a stopped selftest exited 0")
	}
}
