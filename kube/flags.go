package kube

import "github.com/spf13/pflag"

// FlagOf names the flag that sets each JobConfig field ('kube job's, as
// RegisterFlags binds them, and the command's start and replay flags), for
// a command line to say the errors, which name the fields, in its words.
var FlagOf = map[string]string{
	"Name": "--name", "Namespace": "--namespace", "Image": "--image", "Shards": "--shards",
	"ResultsClaim": "--results-claim", "URL": "--url", "WorkloadClaim": "--workload-claim",
	"WorkloadPath": "--workload-path", "ReplayArg": "replay flags after --", "BackoffLimitPerIndex": "--retries",
	"APIKeySecret": "--api-key-secret", "StartAt": "--start-at", "StartIn": "--start-in", "CPU": "--cpu", "Memory": "--memory", "ResultsPath": "--results-path",
}

// RegisterFlags binds c's settings to flags of fs, 'kube job's flags
// for the Job: each setting's flag, default and help live here, beside
// the field (Validate checks the values).
func (c *JobConfig) RegisterFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.Name, "name", "llmreplay", "the Job's name (a DNS label)")
	fs.StringVar(&c.Namespace, "namespace", "", "the namespace (default: kubectl's current one)")
	fs.StringVar(&c.Image, "image", "", "the llmreplay container image (build it from the Containerfile) (required)")
	fs.IntVar(&c.Shards, "shards", 0, "pods, each sending one shard of the workload (required)")
	fs.StringVar(&c.URL, "url", "", "the server's base address as the pods reach it (required)")
	fs.StringVar(&c.ResultsClaim, "results-claim", "", "PersistentVolumeClaim the traces are written to, ReadWriteMany (required)")
	fs.StringVar(&c.ResultsPath, "results-path", "", "folder on the results volume (default: its root)")
	fs.StringVar(&c.WorkloadClaim, "workload-claim", "", "PersistentVolumeClaim holding a workload too big for a ConfigMap")
	fs.StringVar(&c.WorkloadPath, "workload-path", "", "the workload's path on --workload-claim")
	fs.StringVar(&c.APIKeySecret, "api-key-secret", "", "a Secret whose key api-key is the API key (sent as OPENAI_API_KEY)")
	fs.StringVar(&c.CPU, "cpu", "2", "CPU each pod requests")
	fs.StringVar(&c.Memory, "memory", "1Gi", "memory each pod requests")
	fs.IntVar(&c.BackoffLimitPerIndex, "retries", 1, "times a failed shard is retried, alone (backoffLimitPerIndex)")
}
