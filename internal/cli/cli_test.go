package cli

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/llmreplay/llmreplay/internal/fielderr"
)

// tree is a small command tree as the binary builds it: flags of every
// kind on "run", a flag only "other" has, the flag error handler and
// single-value flags on the whole tree.
func tree() (root, run *cobra.Command) {
	root = &cobra.Command{Use: "tool", Args: cobra.ArbitraryArgs, RunE: UnknownCommand, SilenceErrors: true, SilenceUsage: true}
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	run = &cobra.Command{Use: "run", RunE: func(*cobra.Command, []string) error { return nil }}
	fs := run.Flags()
	fs.Duration("timeout", 10*time.Minute, "")
	fs.Duration("start-in", 0, "")
	fs.Int("max-tokens", 256, "")
	fs.Int("warmup", 0, "")
	fs.IntSlice("concurrency", []int{1, 2}, "")
	fs.Float64("error-rate", 0, "")
	fs.Bool("quiet", false, "")
	fs.String("url", "", "")
	fs.StringArray("header", nil, "")
	other := &cobra.Command{Use: "other", RunE: func(*cobra.Command, []string) error { return nil }}
	other.Flags().String("shards", "", "")
	root.AddCommand(run, other, &cobra.Command{Use: "hidden", Hidden: true})
	root.SetFlagErrorFunc(FlagError)
	SingleValueFlags(root)
	return root, run
}

func TestFlagErrorSpeaksTheFlagsWords(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--timeout", "30"}, `--timeout "30" has no unit: write 30s, 30ms or 30m (see 'tool run --help')`},
		{[]string{"run", "--timeout", "soon"}, `--timeout "soon" is not a duration: a number with its unit (ns, us, ms, s, m, h), e.g. --timeout 10m (see 'tool run --help')`},
		{[]string{"run", "--start-in", "x"}, `--start-in "x" is not a duration: a number with its unit (ns, us, ms, s, m, h), e.g. --start-in 30s or --start-in 500ms`},
		{[]string{"run", "--quiet=yes"}, `--quiet=yes: it is a switch: write --quiet alone to turn it on, or --quiet=false`},
		{[]string{"run", "--concurrency", "1-8"}, `--concurrency "1-8": a range is not taken: list the values, separated by commas (e.g. --concurrency 1,2)`},
		{[]string{"run", "--concurrency", "a"}, `--concurrency "a" is not a list of whole numbers: e.g. --concurrency 1,2`},
		{[]string{"run", "--max-tokens", "99999999999999999999"}, `--max-tokens "99999999999999999999" is too large (digits only, e.g. --max-tokens 256)`},
		{[]string{"run", "--warmup", "two"}, `--warmup "two" is not a whole number: digits only, e.g. --warmup 4`},
		{[]string{"run", "--error-rate", "5%"}, `--error-rate "5%": give a fraction, not a percentage: --error-rate 0.05`},
		{[]string{"run", "--error-rate", "x"}, `--error-rate "x" is not a number: e.g. --error-rate 0.5`},
		{[]string{"run", "--url", "a", "--url", "b"}, `--url "b": given twice: it takes one value, give it once`},
		{[]string{"run", "--max-tokens"}, `--max-tokens needs a value: digits only, e.g. --max-tokens 256 (see 'tool run --help')`},
		{[]string{"run", "--max-token", "5"}, `unknown flag: --max-token (did you mean --max-tokens?) (see 'tool run --help')`},
		{[]string{"run", "--shards", "4"}, `unknown flag: --shards: it is a flag of other, not of run (see 'tool run --help')`},
		{[]string{"run", "--zzzzzz"}, `unknown flag: --zzzzzz (see 'tool run --help')`},
		{[]string{"runn"}, `unknown command "runn" (did you mean run?) (see 'tool --help')`},
	} {
		root, _ := tree()
		root.SetArgs(tc.args)
		err := root.Execute()
		if err == nil || !strings.Contains(err.Error(), tc.want) || Code(err) != 2 {
			t.Errorf("%v: %v (exit %d), want exit 2 with %q", tc.args, err, Code(err), tc.want)
		}
	}
}

func TestListFlagsAccumulateSingleValuesDoNot(t *testing.T) {
	root, run := tree()
	root.SetArgs([]string{"run", "--header", "a: 1", "--header", "b: 2", "--url", "x"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if h, _ := run.Flags().GetStringArray("header"); len(h) != 2 {
		t.Errorf("--header twice: %q, want both", h)
	}
	f := run.Flags().Lookup("url")
	if err := Underlying(f.Value).Set("y"); err != nil || f.Value.String() != "y" {
		t.Errorf("the program setting a flag the user gave once: %v, %q", err, f.Value.String())
	}
	if d := run.Flags().Lookup("start-in").DefValue; d != "0" {
		t.Errorf("a zero duration's default reads %q, want 0 (help shows no default)", d)
	}
}

func TestArgumentChecks(t *testing.T) {
	group := &cobra.Command{Use: "trace", RunE: NeedsSubcommand}
	group.AddCommand(&cobra.Command{Use: "info", Run: func(*cobra.Command, []string) {}}, &cobra.Command{Use: "cat", Run: func(*cobra.Command, []string) {}})
	one := OneFile("replay", "a workload file")
	for _, tc := range []struct {
		err  error
		want string
	}{
		{NeedsSubcommand(group, nil), "trace needs a subcommand: one of cat, info (see 'trace --help')"},
		{NeedsSubcommand(group, []string{"inf"}), `unknown trace subcommand "inf" (did you mean info?): use one of cat, info (see 'trace --help')`},
		{one(nil, nil), "replay needs a workload file"},
		{one(nil, []string{"a", "b"}), "replay takes one file, got 2: a b (quote a value that contains spaces)"},
	} {
		if tc.err == nil || tc.err.Error() != tc.want || Code(tc.err) != 2 {
			t.Errorf("%v (exit %d), want exit 2 with %q", tc.err, Code(tc.err), tc.want)
		}
	}
	if err := one(nil, []string{"a"}); err != nil {
		t.Errorf("one file: %v", err)
	}
}

func TestExitCodes(t *testing.T) {
	plain := errors.New("server unreachable")
	for _, tc := range []struct {
		err  error
		want int
	}{
		{plain, 1},
		{Usage(plain), 2},
		{Usage(Exit(130, plain)), 130}, // a status already chosen stays
		{Exit(3, plain), 3},
		{errors.New(`accepts 1 arg(s), received 2`), 2},
		{errors.New(`unknown shorthand flag: 'x' in -x`), 2},
	} {
		if got := Code(tc.err); got != tc.want {
			t.Errorf("%v: exit %d, want %d", tc.err, got, tc.want)
		}
	}
	if Usage(nil) != nil {
		t.Error("Usage(nil) is not nil")
	}
}

func TestFieldsRenameAndGiven(t *testing.T) {
	names := Fields{"Schedule": "--schedule", "Trace": "-o"}.With(map[string]string{"Schedule": "--plan"})
	for _, tc := range []struct {
		err      error
		want     string
		wantCode int
	}{
		{fielderr.New("BuildConfig", "Schedule", `"storm" is unknown`, "use burst"), `--plan "storm" is unknown: use burst`, 2},
		{fielderr.Newf("Config", "Trace", "{Trace} %q exists", "x"), `-o "x" exists`, 2},
		{fielderr.New("Config", "Other", "is bad", "fix it"), "Config.Other is bad: fix it", 2},
		{errors.New("connection refused"), "connection refused", 1},
		{errors.Join(fielderr.Newf("Job", "Schedule", "{Schedule} %q is bad", "x"), errors.New("the workload is empty"), fielderr.Newf("Job", "Trace", "{Trace} is required")),
			"--plan \"x\" is bad\nthe workload is empty\n-o is required", 2},
	} {
		got := names.Error(tc.err)
		if got.Error() != tc.want || Code(got) != tc.wantCode {
			t.Errorf("%v: %v (exit %d), want %q (exit %d)", tc.err, got, Code(got), tc.want, tc.wantCode)
		}
	}
	_, run := tree()
	if err := run.Flags().Parse([]string{"--url", "x"}); err != nil {
		t.Fatal(err)
	}
	given := Fields{"URL": "--url", "Warmup": "--warmup", "None": ""}.Given(run.Flags())
	if !given("URL") || given("Warmup") || given("None") || given("Missing") {
		t.Error("Given: want only URL, the flag typed")
	}
}

func TestFillHelpFromFiles(t *testing.T) {
	root, _ := tree()
	files := fstest.MapFS{
		"help/tool.txt":          {Data: []byte("The tool.\n")},
		"help/run.txt":           {Data: []byte("Runs.\n")},
		"help/run.example.txt":   {Data: []byte("  tool run\n")},
		"help/other.example.txt": {Data: []byte("  tool other")},
	}
	if err := FillHelp(root, files, "help"); err != nil {
		t.Fatal(err)
	}
	run, _, _ := root.Find([]string{"run"})
	other, _, _ := root.Find([]string{"other"})
	if root.Long != "The tool." || run.Long != "Runs." || run.Example != "  tool run" || other.Example != "  tool other" || other.Long != "" {
		t.Errorf("filled: root %q, run %q %q, other %q %q", root.Long, run.Long, run.Example, other.Long, other.Example)
	}
	files["help/rnu.txt"] = &fstest.MapFile{Data: []byte("misnamed")}
	root, _ = tree()
	if err := FillHelp(root, files, "help"); err == nil || !strings.Contains(err.Error(), "help/rnu.txt names no command") {
		t.Errorf("a misnamed file: %v", err)
	}
}

func TestParseFlagsAndUnnamed(t *testing.T) {
	var out, url string
	register := func(fs *pflag.FlagSet) {
		fs.StringVarP(&out, "output", "o", "", "")
		fs.StringVar(&url, "url", "", "")
	}
	fs, err := ParseFlags(register, "-o", "x", "--url", "http://h")
	if err != nil || out != "x" || url != "http://h" {
		t.Fatalf("%v: -o %q --url %q", err, out, url)
	}
	if u := Unnamed(fs, map[string]string{"Trace": "-o", "URL": "--url"}); len(u) != 0 {
		t.Errorf("all named, by flag or shorthand: %v", u)
	}
	if u := Unnamed(fs, map[string]string{"Trace": "-o"}); len(u) != 1 || u[0] != "--url" {
		t.Errorf("--url unnamed: %v", u)
	}
}
