// Package servermetrics reads what a server says about its own state during
// a run: it scrapes a Prometheus /metrics endpoint into a trace.Scrape
// (every sample kept, the text and OpenMetrics formats parsed by
// prometheus/common/expfmt), and maps the metric names of known engines
// (vLLM, SGLang, llama.cpp, TGI, llmreplay's simulator) to common
// meanings: requests running and waiting, KV-cache usage, preemptions,
// prefix-cache hits and queries.
//
// It never trusts the endpoint: a body is capped, a scrape times out
// before the next is due, and HTML, malformed or oversized answers become a
// failed scrape with its reason, never an error that stops a run.
package servermetrics

import (
	"bytes"
	"fmt"
	"math"
	"mime"
	"sort"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/llmreplay/llmreplay/trace"
)

// Parse reads a /metrics body in the Prometheus text format (0.0.4) or the
// OpenMetrics text format, as contentType says (an empty or unknown type
// is read as the Prometheus text format, which most servers send). It
// returns every sample, histograms and summaries flattened to their
// _bucket/_sum/_count (and quantile) series, sorted by name and labels.
func Parse(body []byte, contentType string) ([]trace.Sample, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch {
	case mt == "text/html" || looksHTML(body):
		return nil, fmt.Errorf("the answer is an HTML page, not metrics (a login page or a web UI at that address?)")
	case mt == "application/json" || (len(body) > 0 && (body[0] == '{' || body[0] == '[')):
		return nil, fmt.Errorf("the answer is JSON, not the Prometheus text format")
	case mt == "application/vnd.google.protobuf":
		return nil, fmt.Errorf("the answer is in the protobuf format: llmreplay asks for text and reads only text")
	}
	if mt == "application/openmetrics-text" || bytes.Contains(body, []byte("\n# EOF")) || bytes.HasPrefix(body, []byte("# EOF")) {
		body = openMetricsToText(body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("not in the Prometheus text format: %s", oneLine(err.Error()))
	}
	list := make([]string, 0, len(fams))
	for name := range fams {
		list = append(list, name)
	}
	sort.Strings(list)
	out := []trace.Sample{}
	for _, name := range list {
		vec, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{}, fams[name])
		if err != nil {
			return nil, fmt.Errorf("metric %s: %s", name, oneLine(err.Error()))
		}
		start := len(out)
		for _, s := range vec {
			out = append(out, trace.Sample{Name: string(s.Metric[model.MetricNameLabel]), Labels: labelText(s.Metric), Value: float64(s.Value)})
		}
		part := out[start:]
		sort.SliceStable(part, func(i, j int) bool {
			if part[i].Name != part[j].Name {
				return part[i].Name < part[j].Name
			}
			return part[i].Labels < part[j].Labels
		})
	}
	return out, nil
}

// labelText writes a series' labels as the text format does, without the
// braces and the name, sorted by label name.
func labelText(m model.Metric) string {
	names := make([]string, 0, len(m))
	for k := range m {
		if k != model.MetricNameLabel {
			names = append(names, string(k))
		}
	}
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names)
	var b strings.Builder
	for i, k := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteString(`="`)
		b.WriteString(labelEscaper.Replace(string(m[model.LabelName(k)])))
		b.WriteByte('"')
	}
	return b.String()
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)

// openMetricsToText turns OpenMetrics text into what the Prometheus text
// parser reads. expfmt writes OpenMetrics but parses only the older text
// format; the two differ, for what a scrape needs, only in exemplars (" #
// {…} v" after a sample's value) and the "# EOF" and "# UNIT" lines, which
// are dropped here, and in four type names, renamed. Everything else (names, labels, values, TYPE and HELP)
// is the parser's.
func openMetricsToText(body []byte) []byte {
	var out bytes.Buffer
	out.Grow(len(body))
	for len(body) > 0 {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		t := bytes.TrimSpace(line)
		if bytes.Equal(t, []byte("# EOF")) || bytes.HasPrefix(t, []byte("# UNIT ")) {
			continue
		}
		if f := bytes.Fields(t); len(f) == 4 && string(f[0]) == "#" && string(f[1]) == "TYPE" {
			// Types the older format lacks: their samples are kept as
			// untyped series (a gauge histogram's as a histogram's).
			switch string(f[3]) {
			case "unknown", "info", "stateset":
				line = []byte("# TYPE " + string(f[2]) + " untyped")
			case "gaugehistogram":
				line = []byte("# TYPE " + string(f[2]) + " histogram")
			}
		}
		if len(t) > 0 && t[0] != '#' {
			if i := exemplarStart(line); i >= 0 {
				line = bytes.TrimRight(line[:i], " ")
			}
		}
		out.Write(line)
		out.WriteByte('\n')
	}
	return out.Bytes()
}

// exemplarStart finds " # {" outside a quoted label value, or -1.
func exemplarStart(line []byte) int {
	quoted, esc := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case esc:
			esc = false
		case quoted && c == '\\':
			esc = true
		case c == '"':
			quoted = !quoted
		case !quoted && c == '#' && i > 0 && line[i-1] == ' ':
			return i - 1
		}
	}
	return -1
}

func looksHTML(body []byte) bool {
	head := bytes.ToLower(bytes.TrimSpace(body[:min(len(body), 512)]))
	return bytes.HasPrefix(head, []byte("<!doctype html")) || bytes.HasPrefix(head, []byte("<html")) || bytes.HasPrefix(head, []byte("<head")) || bytes.HasPrefix(head, []byte("<?xml"))
}

// oneLine keeps an error on one line and short: it may quote the server.
func oneLine(s string) string {
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	return s
}

// isFinite reports whether v is a usable gauge reading.
func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
