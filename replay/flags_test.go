package replay

import (
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmreplay/llmreplay/internal/cli"
	"github.com/llmreplay/llmreplay/internal/fielderr"
)

// parsed is Flags registered and parsed from args.
func parsed(t *testing.T, args ...string) (*Flags, *pflag.FlagSet) {
	t.Helper()
	var f Flags
	fs, err := cli.ParseFlags(func(fs *pflag.FlagSet) { f.Register(fs, "openai-chat") }, args...)
	if err != nil {
		t.Fatal(err)
	}
	return &f, fs
}

// TestFlagsFillConfigAndSettings: a command line sets Config fields
// directly and Settings' through Apply; defaults are the package's own;
// FlagOf names every flag bound.
func TestFlagsFillConfigAndSettings(t *testing.T) {
	t.Setenv("LLMREPLAY_FLAGS_TEST_KEY", "sk-test")
	f, fs := parsed(t, "--model", "m", "--timeout", "7s", "--salt", "off", "--header", "X-Route: a", "--api-key-env", "LLMREPLAY_FLAGS_TEST_KEY")
	cfg, err := f.Resolve(nil, "out.trace.zst", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.API != "openai-chat" || cfg.Model != "m" || cfg.Timeout != 7*time.Second || cfg.IdleTimeout != DefaultIdleTimeout ||
		cfg.Salt || cfg.Headers.Get("X-Route") != "a" || cfg.APIKey != "sk-test" || cfg.Trace != "out.trace.zst" || !cfg.Prewarm {
		t.Errorf("config %+v", cfg)
	}
	if u := cli.Unnamed(fs, FlagOf); len(u) > 0 {
		t.Errorf("not in FlagOf: %v", u)
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
		f, _ := parsed(t, tc.args...)
		_, err := f.Resolve(nil, "", time.Now())
		if fe := fielderr.As(err); (fe != nil && fe.Field == "APIKeyEnv") != tc.refused {
			t.Errorf("%v: %v, want refused %v", tc.args, err, tc.refused)
		}
	}
}
