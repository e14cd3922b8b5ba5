package analyze

import (
	"fmt"
	"io"
)

// AnalyzeArgs is AnalyzeFiles for a command line's inputs: each arg is
// name=path, a path, or - for stdin (ParseInput); slo is the goodput
// bounds as text (ParseSLO), which replace o.SLO. notes hears which
// tokenizer.json counted a trace's text when o names none and the
// trace's recorded one was found: the count-based checks depend on it.
func AnalyzeArgs(o Options, slo string, args []string, stdin io.Reader, notes io.Writer) (*Result, error) {
	var err error
	if o.SLO, err = ParseSLO(slo); err != nil {
		return nil, err
	}
	inputs := make([]Input, len(args))
	for i, arg := range args {
		inputs[i] = ParseInput(arg)
		inputs[i].Stdin = stdin
	}
	res, err := AnalyzeFiles(o, inputs...)
	if err != nil {
		return nil, err
	}
	if o.Tokenizer == "" {
		for _, t := range res.Traces {
			if t.TokenizerFile != "" {
				fmt.Fprintf(notes, "tokenizer: %s (recorded in %s)\n", t.TokenizerFile, t.Path)
			}
		}
	}
	return res, nil
}
