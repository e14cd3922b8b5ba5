package capacity

import (
	"io"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/analyze/render"
	"github.com/llmreplay/llmreplay/internal/fielderr"
)

// AnalysisOptions say how analyze shows an analysis.
type AnalysisOptions struct {
	Format  string   // summary, table, markdown, csv or json
	Wide    bool     // the wide tables: Format table
	By      []string // the grouping keys (nil: render.DefaultLevels)
	Metrics []string // the metric table's columns
}

// Check refuses a format that is not one, and Wide with another stated
// Format (given says whether it was stated), which it sets to table.
func (o *AnalysisOptions) Check(given fielderr.Given) error {
	if o.Wide {
		if given.Has("Format") && o.Format != "table" {
			return fielderr.Newf("capacity: AnalysisOptions", "Wide", "{Wide} is {Format} table (the wide tables): drop {Wide} or {Format} %s", o.Format)
		}
		o.Format = "table"
	}
	switch o.Format {
	case "summary", "table", "markdown", "csv", "json":
		return nil
	}
	return fielderr.Newf("capacity: AnalysisOptions", "Format", "unknown {Format} %q: use summary, table, markdown, csv or json", o.Format)
}

// WriteAnalysis writes res as o says to w, with the capacity traces'
// answers (views) after it; in CSV and JSON the warnings, and in CSV the
// answers too, go to notes, so w holds only the data.
func WriteAnalysis(w, notes io.Writer, res *analyze.Result, views []View, o AnalysisOptions) error {
	keys := o.By
	if keys == nil {
		keys = render.DefaultLevels(res)
	}
	if o.Format == "json" {
		res.Want(o.Metrics...) // any percentile Metrics names joins the groups' metrics
		doc := analyze.NewDocument(res, keys)
		if err := render.RenderWarnings(notes, doc.Warnings); err != nil {
			return err
		}
		return WriteAnalyzeJSON(w, doc, views)
	}
	if o.Format == "summary" && len(o.Metrics) == 0 {
		if err := render.RenderSummaryText(w, render.BuildSummary(res, render.SummaryOptions{By: keys})); err != nil {
			return err
		}
		WriteViews(w, views, false)
		return nil
	}
	t, err := render.BuildTable(res, render.TableOptions{By: keys, Metrics: o.Metrics, Raw: o.Format == "csv"})
	if err != nil {
		return err
	}
	switch o.Format {
	case "csv":
		if err := render.RenderWarnings(notes, analyze.AllWarnings(res, keys)); err != nil {
			return err
		}
		WriteViewLines(notes, views)
		return render.RenderCSV(w, t)
	case "markdown":
		err = render.RenderMarkdown(w, t)
	default:
		err = render.RenderText(w, t)
	}
	if err == nil {
		WriteViews(w, views, o.Format == "markdown")
	}
	return err
}
