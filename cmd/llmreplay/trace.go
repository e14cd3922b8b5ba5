package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/internal/safetext"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/trace/inspect"
)

func newTraceCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "trace",
		Short:   "Inspect trace files: header and counts, or every record as JSON",
		Long:    helpText("trace"),
		Example: helpText("trace.example"),
		Args:    cobra.ArbitraryArgs,
		RunE:    needsSubcommand,
	}
	cmd.AddCommand(newTraceInfoCmd(), newTraceCatCmd(), newTraceMergeCmd())
	return cmd
}

// openTrace opens path ("-" is standard input). A file that cannot be read
// as a trace is bad input: exit status 2.
func openTrace(cmd *cobra.Command, path string) (*trace.Reader, error) {
	var (
		r   *trace.Reader
		err error
	)
	if path == "-" {
		r, err = trace.NewReader(cmd.InOrStdin())
	} else {
		r, err = trace.Open(path)
	}
	if err != nil {
		return nil, usageError(err)
	}
	return r, nil
}

// finishScan turns how a scan ended into the notes and the error the
// user sees: a cut-short tail is a note (a killed run leaves one),
// corruption is an error.
func finishScan(cmd *cobra.Command, path string, r *trace.Reader) error {
	for _, n := range inspect.Notes(path, r) {
		fmt.Fprintln(cmd.ErrOrStderr(), n)
	}
	if err := r.Err(); err != nil {
		return usageError(err)
	}
	return nil
}

func needTraces(args []string) error {
	if len(args) == 0 {
		return usagef("name a trace file, e.g. 'run.trace.zst' (or - for standard input)")
	}
	return nil
}

func newTraceInfoCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "info TRACE...",
		Short:   "Print a trace's header and counts of records, failures, chunks and text",
		Example: "  llmreplay trace info run.trace.zst",
		Args:    func(_ *cobra.Command, args []string) error { return needTraces(args) },
		RunE: func(cmd *cobra.Command, args []string) error {
			for i, path := range args {
				if i > 0 {
					fmt.Fprintln(cmd.OutOrStdout())
				}
				if err := traceInfo(cmd, path); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func traceInfo(cmd *cobra.Command, path string) error {
	r, err := openTrace(cmd, path)
	if err != nil {
		return err
	}
	defer r.Close()
	inspect.Read(r, path).WriteText(cmd.OutOrStdout())
	if err := r.Err(); err != nil {
		return usageError(err)
	}
	return nil
}

func newTraceCatCmd() *cobra.Command {
	var (
		noChunks    bool
		requests    bool
		scrapes     bool
		definitions string
	)
	cmd := &cobra.Command{
		Use:     "cat TRACE...",
		Short:   "Print every record as one JSON object per line, for jq; --requests prints each request's metrics",
		Long:    helpText("trace-cat"),
		Example: helpText("trace-cat.example"),
		Args:    func(_ *cobra.Command, args []string) error { return needTraces(args) },
		RunE: func(cmd *cobra.Command, args []string) error {
			if requests && noChunks {
				return usagef("--requests and --no-chunks print different things: give one")
			}
			if scrapes && (requests || noChunks) {
				return usagef("--server-metrics prints the scrapes, not the records: give it without --requests and --no-chunks")
			}
			if cmd.Flags().Changed("definitions") && !requests {
				return usagef("--definitions applies to --requests only")
			}
			if _, err := analyze.LookupDefinitions(definitions); err != nil {
				return flagError(usageError(err))
			}
			bw := bufio.NewWriterSize(cmd.OutOrStdout(), 64<<10)
			// Records hold the server's own strings, exact for jq; the
			// bidirectional and C1 controls among them are written as \u
			// escapes (same value when decoded), so the lines cannot be
			// reordered on a terminal (encoding/json escapes C0 itself).
			enc := json.NewEncoder(safetext.JSONWriter(bw))
			enc.SetEscapeHTML(false)
			for _, path := range args {
				var err error
				if requests {
					err = traceRequests(cmd, path, enc, definitions)
				} else {
					err = traceCat(cmd, path, enc, noChunks, scrapes)
				}
				if err != nil {
					bw.Flush()
					return err
				}
			}
			return bw.Flush()
		},
	}
	cmd.Flags().BoolVar(&noChunks, "no-chunks", false, "leave out the chunks (print chunk_count instead)")
	cmd.Flags().BoolVar(&scrapes, "server-metrics", false, "print the scrapes of the server's /metrics (and of a watched process) the run took, one JSON object per line (t_ns, duration_ns, source, target, error, samples), instead of the records; the client's own clock readings are summed up by trace info")
	cmd.Flags().BoolVar(&requests, "requests", false, "print each request's metrics (TTFT, E2E, tokens, per-stream tok/s, error) instead of its record")
	cmd.Flags().StringVar(&definitions, "definitions", analyze.DefaultDefinitions,
		"with --requests: compute per-stream tok/s and TPOT the way a tool does: "+strings.Join(analyze.DefinitionNames(), "|"))
	return cmd
}

// traceCat prints path's records (inspect.Records), or with scrapes its
// scrapes (inspect.Scrapes), one JSON object each.
func traceCat(cmd *cobra.Command, path string, enc *json.Encoder, noChunks, scrapes bool) error {
	r, err := openTrace(cmd, path)
	if err != nil {
		return err
	}
	defer r.Close()
	if scrapes {
		err = inspect.Scrapes(enc, r)
	} else {
		err = inspect.Records(enc, r, noChunks)
	}
	if err != nil {
		return writeError(err)
	}
	return finishScan(cmd, path, r)
}

// traceRequests prints one analyze.RequestRow per record. A trace without
// a label of its own is labelled by its file name, as analyze does.
func traceRequests(cmd *cobra.Command, path string, enc *json.Encoder, definitions string) error {
	r, err := openTrace(cmd, path)
	if err != nil {
		return err
	}
	defer r.Close()
	label := ""
	if r.Header().Label == "" {
		label = strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".zst"), ".trace")
	}
	l, err := analyze.NewRequestLister(label, r.Header(), definitions)
	if err != nil {
		return usageError(err)
	}
	if why := l.TokenizerFallback(); why != "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: %s: the trace's tokenizer could not be loaded (%s); output tokens without server counts are chunk counts (output_tokens_source \"chunks\")\n",
			path, safetext.Show(why))
	}
	for r.Scan() {
		row := l.Row(r.Record())
		if err := enc.Encode(&row); err != nil {
			return writeError(err)
		}
	}
	return finishScan(cmd, path, r)
}

// writeError reports a failure to write the output (a closed pipe, a full
// disk): not bad input, so exit status 1.
func writeError(err error) error { return fmt.Errorf("writing the output: %w", err) }
