package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/internal/fielderr"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// TestEnvVarName: what --api-key-env may echo back. Names, however long,
// are words joined by underscores; keys are not.
func TestEnvVarName(t *testing.T) {
	for _, c := range []struct {
		s    string
		name bool
	}{
		{"OPENAI_API_KEY", true},
		{"HF_TOKEN", true},
		{"MY_KEY_2", true},
		{"AZURE_OPENAI_API_KEY_2025", true},
		{"LLMREPLAY_SECONDARY_ENDPOINT_KEY", true},
		{"openai_api_key", true},
		{"", true},                                   // refused before, with its own message
		{"F93A7C21D84B6E05A2C9F71B3D8E4A60", false},  // upper-case hex key
		{"ABCDEFGHIJKLMNOPQRSTUVWXYZABCD", false},    // long, no underscore
		{"hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123", false}, // Hugging Face token
		{"KEY_1234567_ABCDEFGHIJKLMNOPQ", false},     // long with six digits
		{"sk-llmreplay-C-7e2b94d05a1c38f6", false},   // a dash
		{"9ABC", false},                              // leads with a digit
		{"A" + strings.Repeat("_B", 40), false},      // past 64
	} {
		if got := envVarName(c.s); got != c.name {
			t.Errorf("envVarName(%q) = %v, want %v", c.s, got, c.name)
		}
	}
}

// TestSettingsRefuseEachBadValue: each setting written as a person writes
// it is checked by Apply, and the error names its field with the value
// and an accepted form; a shard gets its part and the common start.
func TestSettingsRefuseEachBadValue(t *testing.T) {
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	wl := &workload.Workload{Header: workload.Header{Phases: []workload.Phase{{Kind: workload.KindBurst, Concurrency: 4, Requests: 4}}}}
	for i := range 4 {
		wl.Requests = append(wl.Requests, workload.Request{Slot: i})
	}
	t.Setenv("LLMREPLAY_EMPTY_TEST_VAR", "")
	cases := []struct {
		s     Settings
		field string
		want  string
	}{
		{Settings{Salt: "maybe"}, "Salt", `Salt "maybe": use on or off`},
		{Settings{Salt: "on", Headers: []string{"novalue"}}, "Headers", "Headers needs NAME: VALUE"},
		{Settings{Salt: "on", ExtraBody: "@/no/such/file"}, "ExtraBody", "ExtraBody @/no/such/file: no such file or directory"},
		{Settings{Salt: "on", APIKeyEnvNamed: true}, "APIKeyEnv", "APIKeyEnv needs the name of the environment variable"},
		{Settings{Salt: "on", APIKeyEnvNamed: true, APIKeyEnv: "sk-abcdefghijklmnopqrstuvwxyz0123456789"}, "APIKeyEnv", "what was given is not one (not repeated here"},
		{Settings{Salt: "on", APIKeyEnvNamed: true, APIKeyEnv: "LLMREPLAY_EMPTY_TEST_VAR"}, "APIKeyEnv", "LLMREPLAY_EMPTY_TEST_VAR is not set or is empty"},
		{Settings{Salt: "on", Shard: "0/2", Shards: 2}, "Shard", "Shard and Shards both given"},
		{Settings{Salt: "on", Shard: "x"}, "Shard", "Shard: "},
		{Settings{Salt: "on", Shard: "5/8"}, "Shard", "shard 5/8 has no request to send: the workload has 4 requests, too few for 8 shards"},
		{Settings{Salt: "on", StartIn: -time.Second}, "StartIn", "StartIn -1s: give a wait from 0 to 24h0m0s"},
		{Settings{Salt: "on", StartAt: "noon"}, "StartAt", `StartAt "noon" is not an RFC 3339 time`},
		{Settings{Salt: "on", StartAt: "2026-12-05T10:00:00Z"}, "StartAt", "is more than 24h0m0s away"},
		{Settings{Salt: "on", StartAt: "2026-12-01T10:00:00Z"}, "StartAt", "passed 48h0m0s ago"},
	}
	for _, c := range cases {
		cfg := Config{Workload: wl}
		err := c.s.Apply(&cfg, now)
		if fe := fielderr.As(err); fe == nil || fe.Field != c.field || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want a %s error saying %q", c.s, err, c.field, c.want)
		}
	}
	cfg := Config{Workload: wl}
	if err := (Settings{Salt: "off", Shard: "1/2", StartIn: time.Minute}).Apply(&cfg, now); err != nil {
		t.Fatal(err)
	}
	if cfg.Salt || len(cfg.Workload.Requests) != 2 || *cfg.Shard != (trace.Shard{Index: 1, Count: 2}) || !cfg.StartAt.Equal(now.Add(time.Minute)) {
		t.Errorf("shard 1/2 starting in 1m: got salt %v, %d requests, shard %+v, start %v", cfg.Salt, len(cfg.Workload.Requests), cfg.Shard, cfg.StartAt)
	}
	if got := cfg.DefaultTrace(now); !strings.HasSuffix(got, "-shard1of2.trace.zst") {
		t.Errorf("a shard's default trace %q does not end in its shard", got)
	}
}
