package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/llmreplay/llmreplay/internal/fielderr"
	"github.com/llmreplay/llmreplay/internal/outfile"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// Settings are a run's settings as a person writes them, beside its
// Config: Apply checks each and sets the Config's fields from it. Their
// errors name the setting's field (fielderr), so a command line says
// them with its flags.
type Settings struct {
	Salt      string   // "on" or "off" (Config.Salt)
	Headers   []string // "NAME: VALUE" or "NAME:VALUE" each (Config.Headers)
	ExtraBody string   // a JSON object, or @FILE holding one (Config.ExtraBody)
	// APIKeyEnv is the environment variable holding the API key. The
	// default variable may be unset (local servers take no key); one the
	// user named (APIKeyEnvNamed) must hold a key, or every request
	// would go without one and the run measure a server refusing them.
	APIKeyEnv      string
	APIKeyEnvNamed bool

	// One part of a run sent from several client machines
	// (docs/DISTRIBUTED.md): part I of N ("I/N"), or of Shards with I
	// from $JobIndexEnv (a Kubernetes Indexed Job); and a common start,
	// a wall-clock time (RFC 3339) or a wait.
	Shard   string
	Shards  int
	StartAt string
	StartIn time.Duration
}

// JobIndexEnv is set by Kubernetes in every pod of an Indexed Job.
const JobIndexEnv = "JOB_COMPLETION_INDEX"

// MaxStartWait bounds StartAt both ways: a start further away is a typo
// (a wrong day or time zone), not a plan. One that passed within it is a
// shard that started late (a retried pod, a slow machine): it runs, and
// says so (Notes), since it no longer lines up with the others.
const MaxStartWait = 24 * time.Hour

func settingErr(field, format string, args ...any) error {
	return fielderr.Newf("replay: Settings", field, format, args...)
}

// Apply checks the settings and sets c's fields from them, with now the
// time a StartIn counts from; a Shard cuts c.Workload to its part.
func (s Settings) Apply(c *Config, now time.Time) error {
	switch s.Salt {
	case "on", "off":
		c.Salt = s.Salt == "on"
	default:
		return settingErr("Salt", "{Salt} %q: use on or off", s.Salt)
	}
	var err error
	if c.Headers, err = parseHeaders(s.Headers); err != nil {
		return err
	}
	if c.ExtraBody, err = readExtraBody(s.ExtraBody); err != nil {
		return err
	}
	if c.APIKey, err = s.apiKey(); err != nil {
		return err
	}
	if c.Workload == nil {
		return nil
	}
	return s.shard(c, now)
}

// apiKey reads the key from the variable APIKeyEnv names. The error names
// the variable, never its value, and does not repeat a "name" that looks
// like a key: --api-key-env "$OPENAI_API_KEY" passes the key.
func (s Settings) apiKey() (string, error) {
	key := os.Getenv(s.APIKeyEnv)
	if !s.APIKeyEnvNamed || strings.TrimSpace(key) != "" {
		return key, nil
	}
	name := s.APIKeyEnv
	switch {
	case name == "":
		return "", settingErr("APIKeyEnv", "{APIKeyEnv} needs the name of the environment variable holding the key, e.g. {APIKeyEnv} OPENAI_API_KEY; to send no key, drop the flag")
	case !envVarName(name):
		return "", settingErr("APIKeyEnv", "{APIKeyEnv} takes the name of an environment variable, and what was given is not one (not repeated here: it may be the key itself); write {APIKeyEnv} OPENAI_API_KEY, not {APIKeyEnv} \"$OPENAI_API_KEY\"")
	}
	return "", settingErr("APIKeyEnv", "{APIKeyEnv} %s: the environment variable %s is not set or is empty, so no API key would be sent; export %s=YOUR_KEY first, or drop {APIKeyEnv} (the default, OPENAI_API_KEY, is used when set)", name, name, name)
}

// envVarName reports whether s is shaped like an environment variable's
// name (letters, digits, _; not starting with a digit) and not like a key.
// Past 24 characters a mix of lower case and digits (Hugging Face's hf_…,
// hex keys), six digits or more (an upper-case hex or base32 key), or no
// underscore at all is a token more likely than a name, so it is not
// echoed: names that long are words joined by underscores
// (AZURE_OPENAI_API_KEY_2025).
func envVarName(s string) bool {
	lower, digits, under := false, 0, false
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z':
			lower = true
		case r >= '0' && r <= '9' && i > 0:
			digits++
		case r == '_':
			under = true
		case r >= 'A' && r <= 'Z':
		default:
			return false
		}
	}
	if len(s) > 24 && (lower && digits > 0 || digits >= 6 || !under) {
		return false
	}
	return len(s) <= 64
}

// parseHeaders reads "NAME: VALUE" or "NAME:VALUE" headers. The value is
// never echoed in an error: it may be a key. Whether a header may be sent
// is Resolve's to check.
func parseHeaders(vals []string) (http.Header, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	h := http.Header{}
	for _, v := range vals {
		name, value, ok := strings.Cut(v, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, settingErr("Headers", `{Headers} needs NAME: VALUE (one was given without a name before ":"), e.g. {Headers} "X-Priority: high"`)
		}
		h.Add(name, strings.TrimSpace(value))
	}
	return h, nil
}

// readExtraBody reads an extra body: the JSON itself, or @FILE. Whether
// it is a usable object is Resolve's to check.
func readExtraBody(v string) (json.RawMessage, error) {
	if path, ok := strings.CutPrefix(v, "@"); ok {
		b, err := os.ReadFile(path)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err // without its repeated path
			}
			return nil, settingErr("ExtraBody", "{ExtraBody} @%s: %v", path, err)
		}
		return b, nil
	}
	if v == "" {
		return nil, nil
	}
	return json.RawMessage(v), nil
}

// shard cuts c.Workload to this shard's part and sets c's shard and start.
func (s Settings) shard(c *Config, now time.Time) error {
	var spec workload.ShardSpec
	sharded := false
	switch {
	case s.Shard != "" && s.Shards != 0:
		return settingErr("Shard", "{Shard} and {Shards} both given: use {Shard} I/N, or {Shards} N with $%s set", JobIndexEnv)
	case s.Shard != "":
		sp, err := workload.ParseShard(s.Shard)
		if err != nil {
			return settingErr("Shard", "{Shard}: %v", err)
		}
		spec, sharded = sp, true
	case s.Shards != 0:
		v, ok := os.LookupEnv(JobIndexEnv)
		if !ok {
			return settingErr("Shards", "{Shards} %d needs $%s (set by a Kubernetes Indexed Job) for this part's index: outside a Job use {Shard} I/%d", s.Shards, JobIndexEnv, s.Shards)
		}
		i, err := strconv.Atoi(v)
		if err != nil {
			return settingErr("Shards", "$%s is %q, not a whole number", JobIndexEnv, v)
		}
		spec, sharded = workload.ShardSpec{Index: i, Count: s.Shards}, true
		if err := spec.Valid(); err != nil {
			return settingErr("Shards", "{Shards} %d with $%s=%d: %v", s.Shards, JobIndexEnv, i, err)
		}
	}
	if s.StartAt != "" && s.StartIn != 0 {
		return settingErr("StartAt", "{StartAt} and {StartIn} both given: use one")
	}
	if s.StartIn < 0 || s.StartIn > MaxStartWait {
		return settingErr("StartIn", "{StartIn} %v: give a wait from 0 to %v", s.StartIn, MaxStartWait)
	}
	if s.StartAt != "" {
		t, err := time.Parse(time.RFC3339Nano, s.StartAt)
		if err != nil {
			return settingErr("StartAt", "{StartAt} %q is not an RFC 3339 time: write it like 2026-12-03T10:00:00Z", s.StartAt)
		}
		if t.Sub(now) > MaxStartWait {
			return settingErr("StartAt", "{StartAt} %s is more than %v away: check the date and time zone", s.StartAt, MaxStartWait)
		}
		if late := now.Sub(t); late > MaxStartWait {
			return settingErr("StartAt", "{StartAt} %s passed %v ago, more than %v: check the date and time zone, or leave {StartAt} out to start now", s.StartAt, late.Round(time.Minute), MaxStartWait)
		}
		c.StartAt = t
	} else if s.StartIn > 0 {
		c.StartAt = now.Add(s.StartIn)
	}
	if !sharded {
		return nil
	}
	part, err := workload.Shard(c.Workload, spec)
	if err != nil {
		return settingErr("Shard", "{Shard}: %v", err)
	}
	if len(part.Requests) == 0 {
		return settingErr("Shard", "shard %s has no request to send: the workload has %d requests, too few for %d shards", spec, len(c.Workload.Requests), spec.Count)
	}
	c.WorkloadDigest = workload.Digest(c.Workload)
	c.Workload = part
	c.Shard = &trace.Shard{Index: spec.Index, Count: spec.Count}
	return nil
}

// ClockWarning says, before a shard runs, when its clock is too poor for
// its trace to be merged with shards from other hosts
// (docs/DISTRIBUTED.md); "" when c is no shard or the clock is good.
func (c *Config) ClockWarning() string {
	if c.Shard == nil {
		return ""
	}
	clock := WallClockError()
	if clock.Trusted() {
		return ""
	}
	return fmt.Sprintf("warning: this machine's clock %s: trace merge will take this shard beside shards from other hosts only with --allow-clock (shards on this host share its clock and merge exactly)",
		clock.Describe())
}

// DefaultTrace is the trace a run starting at now writes when given none:
// under trace.ResultsDir, named by its label, model and time, and its
// shard ("-shard0of4").
func (c *Config) DefaultTrace(now time.Time) string {
	suffix := ""
	if c.Shard != nil {
		suffix = fmt.Sprintf("-shard%dof%d", c.Shard.Index, c.Shard.Count)
	}
	return trace.DefaultPath(c.Label, c.Model, now, suffix)
}

// PrepareTrace makes the folder of a default trace (named by DefaultTrace)
// and checks that c.Trace may be written: never over one of inputs, and
// over an existing file only with force, which removes it.
func (c *Config) PrepareTrace(defaulted, force bool, inputs ...string) error {
	if defaulted {
		if p := outfile.FileInTheWay(filepath.Dir(c.Trace)); p != "" {
			return fielderr.Newf("replay: Config", "Trace", "replay writes its trace to %s when no {Trace} is given, but %s is a file, not a folder; give {Trace} NAME.trace.zst, or move the file away", c.Trace, p)
		}
		if err := os.MkdirAll(filepath.Dir(c.Trace), 0o755); err != nil {
			return err
		}
	}
	if err := outfile.Check(c.Trace, force, inputs...); err != nil {
		return fielderr.Newf("replay: Config", "Trace", "%v", err)
	}
	if force {
		return outfile.Replace(c.Trace)
	}
	return nil
}

// WriteNotes says on w what resolving decided that was not asked for
// outright: the requests a Duration leaves unsent, and the tokenizer.json
// the workload recorded, when none was given.
func (r *Resolved) WriteNotes(w io.Writer) {
	if r.BeyondDuration > 0 {
		kept := len(r.Workload.Requests)
		fmt.Fprintf(w, "duration: %v bounds each rate or trace phase: %d of %d requests are due within it, %d later ones are not sent\n",
			r.Duration, kept, kept+r.BeyondDuration, r.BeyondDuration)
	}
	if r.TokenizerSource != "" && r.Tokenizer == "" {
		fmt.Fprintf(w, "tokenizer: %s (recorded in the workload)\n", r.TokenizerSource)
	}
}
