package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmreplay/llmreplay/internal/fielderr"
)

// TestFlagsFillConfigAndSettings: a command line sets Config fields
// directly and Settings' through Apply; defaults are the package's own.
func TestFlagsFillConfigAndSettings(t *testing.T) {
	t.Setenv("LLMREPLAY_FLAGS_TEST_KEY", "sk-test")
	var f Flags
	fs := pflag.NewFlagSet("replay", pflag.ContinueOnError)
	f.Register(fs, "openai-chat")
	err := fs.Parse([]string{"--model", "m", "--timeout", "7s", "--salt", "off", "--header", "X-Route: a",
		"--api-key-env", "LLMREPLAY_FLAGS_TEST_KEY", "--no-such-flag-here"})
	if err == nil || !strings.Contains(err.Error(), "no-such-flag-here") {
		t.Fatalf("an unknown flag: %v", err)
	}
	cfg, err := f.Resolve(nil, "out.trace.zst", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.API != "openai-chat" || cfg.Model != "m" || cfg.Timeout != 7*time.Second || cfg.IdleTimeout != DefaultIdleTimeout ||
		cfg.Salt || cfg.Headers.Get("X-Route") != "a" || cfg.APIKey != "sk-test" || cfg.Trace != "out.trace.zst" || !cfg.Prewarm {
		t.Errorf("config %+v", cfg)
	}
}

// TestFlagsTellATypedKeyVariableFromItsDefault: the default variable may
// be unset (a local server takes no key), one the user typed must hold a
// key.
func TestFlagsTellATypedKeyVariableFromItsDefault(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	for _, tc := range []struct {
		args    []string
		refused bool
	}{
		{nil, false},
		{[]string{"--api-key-env", "OPENAI_API_KEY"}, true},
	} {
		var f Flags
		fs := pflag.NewFlagSet("replay", pflag.ContinueOnError)
		f.Register(fs, "openai-chat")
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		_, err := f.Resolve(nil, "", time.Now())
		if fe := fielderr.As(err); (fe != nil && fe.Field == "APIKeyEnv") != tc.refused {
			t.Errorf("%v: %v, want refused %v", tc.args, err, tc.refused)
		}
	}
}

// TestFlagOfNamesEveryFlag: every flag bound is in FlagOf, so an error
// naming its field names the flag.
func TestFlagOfNamesEveryFlag(t *testing.T) {
	fs := pflag.NewFlagSet("flags", pflag.ContinueOnError)
	var f Flags
	f.Register(fs, "openai-chat")
	named := map[string]bool{}
	for _, flag := range FlagOf {
		named[strings.TrimPrefix(flag, "--")] = true
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if !named[f.Name] {
			t.Errorf("--%s: not in FlagOf", f.Name)
		}
	})
}
