package kube

import (
	"strings"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/internal/fielderr"
)

// TestCheckSecretsKeepsCredentialsOutOfTheManifest: a secret header or a
// secret-looking extra body among replay's flags is refused, in either
// flag form, naming where the key belongs; an @FILE body and a harmless
// header pass.
func TestCheckSecretsKeepsCredentialsOutOfTheManifest(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--header", "Authorization: Bearer sk-123456789012345678901234"}, "--header Authorization after -- would write a credential"},
		{[]string{"--header=X-Api-Key: 123456789012345678901234abcd"}, "would write a credential"},
		{[]string{"--extra-body", `{"api_key":"sk-123456789012345678901234"}`}, "--extra-body after -- holds a secret-looking value"},
		{[]string{"--extra-body", "@body.json", "--header", "X-Priority: high", "--label", "x"}, ""},
		{[]string{"--header"}, ""}, // replay itself reports the missing value
	} {
		err := CheckSecrets(c.args)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: refused: %v", c.args, err)
		case c.want != "" && (fielderr.As(err) == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: got %v, want %q", c.args, err, c.want)
		}
	}
}

// TestSetStartTakesOneStart: a start time or a wait, never both, never a
// negative wait, and a time written in RFC 3339.
func TestSetStartTakesOneStart(t *testing.T) {
	now := time.Date(2026, 12, 3, 10, 0, 0, 500, time.UTC)
	var c JobConfig
	if err := c.SetStart("", 2*time.Minute, false, now); err != nil || !c.StartAt.Equal(now.Add(2*time.Minute).Truncate(time.Second)) {
		t.Errorf("a wait: StartAt %v, %v", c.StartAt, err)
	}
	if err := c.SetStart("2026-12-03T11:00:00Z", 2*time.Minute, false, now); err != nil || c.StartAt.Hour() != 11 {
		t.Errorf("a time: StartAt %v, %v", c.StartAt, err)
	}
	for _, bad := range []struct {
		at      string
		in      time.Duration
		inGiven bool
		field   string
	}{{"2026-12-03T11:00:00Z", time.Minute, true, "StartAt"}, {"", -time.Second, true, "StartIn"}, {"11:00", 0, false, "StartAt"}} {
		if fe := fielderr.As(c.SetStart(bad.at, bad.in, bad.inGiven, now)); fe == nil || fe.Field != bad.field {
			t.Errorf("%+v: got %v, want a %s error", bad, fe, bad.field)
		}
	}
}
