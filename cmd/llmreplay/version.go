package main

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/internal/version"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the tool version and the file format versions it writes and reads",
		Example: "  llmreplay version",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "llmreplay %s (%s, %s/%s)\n", version.Tool, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			fmt.Fprintf(w, "workload format: writes %d.%d, reads %s\n", workload.FormatMajor, workload.FormatMinor, strings.Join(workload.ReadVersions, ", "))
			fmt.Fprintf(w, "trace format:    writes %d.%d, reads %s\n", trace.FormatMajor, trace.FormatMinor, strings.Join(trace.ReadVersions, ", "))
			return nil
		},
	}
}
