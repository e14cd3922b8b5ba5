package kube

import (
	"encoding/json"
	"os"
	"strings"
	"time"

	"github.com/llmreplay/llmreplay/internal/fielderr"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/workload"
)

func settingErr(field, format string, args ...any) error {
	return fielderr.Newf("kube: JobConfig", field, format, args...)
}

// Load reads the workload file at path into c: decoded, for the checks
// that need it, and as bytes for the ConfigMap unless WorkloadClaim names
// the volume that holds it.
func (c *JobConfig) Load(path string) error {
	wl, err := workload.Open(path)
	if err != nil {
		return err
	}
	c.Workload = wl
	if c.WorkloadClaim != "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if len(data) > ConfigMapLimit {
		return settingErr("WorkloadClaim", "%s is %d bytes, more than a ConfigMap holds (%d): copy it to a volume and pass {WorkloadClaim} and {WorkloadPath}", path, len(data), ConfigMapLimit)
	}
	c.WorkloadData = data
	return nil
}

// SetStart sets StartAt from at, a time in RFC 3339, or else from a wait
// in after now (truncated to the second); inGiven says the wait was asked
// for, not a default, so that both cannot be.
func (c *JobConfig) SetStart(at string, in time.Duration, inGiven bool, now time.Time) error {
	if at != "" && inGiven {
		return settingErr("StartAt", "{StartAt} and {StartIn} both given: use one")
	}
	if in < 0 {
		return settingErr("StartIn", "{StartIn} %v is negative: give how long from now the shards start", in)
	}
	c.StartAt = now.Add(in).Truncate(time.Second)
	if at != "" {
		t, err := time.Parse(time.RFC3339, at)
		if err != nil {
			return settingErr("StartAt", "{StartAt} %q is not an RFC 3339 time: write it like 2026-12-03T10:00:00Z", at)
		}
		c.StartAt = t
	}
	return nil
}

// JobFlags are the replay flags the Job passes every pod itself: one
// among ReplayArg would come later on the pod's command line and win, so
// the shards would reach another server, split the workload another way
// or start apart. Each says where its value belongs instead.
var JobFlags = []struct{ Name, Fix string }{
	{"url", "give it to kube job before --"},
	{"shards", "give it to kube job before --"},
	{"shard", "each pod's part comes from its Job index: drop it"},
	{"start-at", "give it to kube job before --"},
	{"start-in", "give it to kube job before --"},
	{"output", "each pod writes shard-I.trace.zst on --results-claim (folder: --results-path): drop it"},
}

// CheckSecrets refuses replay flags among args that would write a
// credential into the manifest: a secret --header, or an --extra-body
// holding a secret. The API key has its own way in (APIKeySecret); an
// @FILE extra body is read in the pod, so only its path is written.
func CheckSecrets(args []string) error {
	for i := 0; i < len(args); i++ {
		name, val, inline := strings.Cut(args[i], "=")
		if name != "--header" && name != "--extra-body" {
			continue
		}
		if !inline {
			if i+1 >= len(args) {
				continue // replay itself reports the missing value
			}
			i++
			val = args[i]
		}
		switch name {
		case "--header":
			h, v, _ := strings.Cut(val, ":")
			if replay.SecretHeader(strings.TrimSpace(h), strings.TrimSpace(v)) {
				return settingErr("ReplayArg", "--header %s after -- would write a credential into the manifest: put the key in a Secret and pass {APIKeySecret} (sent as a bearer token)", strings.TrimSpace(h))
			}
		case "--extra-body":
			if !strings.HasPrefix(val, "@") && replay.BodyHasSecret(json.RawMessage(val)) {
				return settingErr("ReplayArg", "--extra-body after -- holds a secret-looking value, which would be written into the manifest: put the body in a file on a volume and pass --extra-body @FILE")
			}
		}
	}
	return nil
}
