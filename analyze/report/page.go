package report

import "html/template"

var pageTmpl = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>{{.Title}}</title>
<style>
:root{--fg:#1b1b1b;--bg:#fff;--mute:#666;--grid:#e3e3e3;--warn:#fff4d6;--warnb:#c98a00;
--c0:#1f77b4;--c1:#d62728;--c2:#2ca02c;--c3:#9467bd;--c4:#ff7f0e;--c5:#17becf;--c6:#8c564b;--c7:#e377c2}
@media (prefers-color-scheme: dark){:root{--fg:#e8e8e8;--bg:#161616;--mute:#a0a0a0;--grid:#333;--warn:#3a2f12;--warnb:#e0a82e;
--c0:#6cb4ff;--c1:#ff7b7b;--c2:#6fdc6f;--c3:#c9a2ff;--c4:#ffb15c;--c5:#5fe3f0;--c6:#d2a48c;--c7:#ff9fd8}}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg);max-width:1240px;margin:0 auto;padding:1rem}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid var(--grid)}
.warn{background:var(--warn);border-left:4px solid var(--warnb);padding:.5rem .8rem;margin:.4rem 0}
.problem{font-weight:600}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:1rem}
figure{margin:0}figcaption{font-weight:600}svg{width:100%;height:auto}.timeline svg{max-width:900px}
.frame{fill:none;stroke:var(--grid)}.grid{stroke:var(--grid)}.tick,.axis{fill:var(--mute);font-size:11px}.axis{font-size:12px}
.line{fill:none;stroke-width:2}.ci{stroke-width:1.5}
.s0 .line,.s0 .ci{stroke:var(--c0)}.s0 .pt,.sw.s0{fill:var(--c0);background:var(--c0)}
.s1 .line,.s1 .ci{stroke:var(--c1)}.s1 .pt,.sw.s1{fill:var(--c1);background:var(--c1)}
.s2 .line,.s2 .ci{stroke:var(--c2)}.s2 .pt,.sw.s2{fill:var(--c2);background:var(--c2)}
.s3 .line,.s3 .ci{stroke:var(--c3)}.s3 .pt,.sw.s3{fill:var(--c3);background:var(--c3)}
.s4 .line,.s4 .ci{stroke:var(--c4)}.s4 .pt,.sw.s4{fill:var(--c4);background:var(--c4)}
.s5 .line,.s5 .ci{stroke:var(--c5)}.s5 .pt,.sw.s5{fill:var(--c5);background:var(--c5)}
.s6 .line,.s6 .ci{stroke:var(--c6)}.s6 .pt,.sw.s6{fill:var(--c6);background:var(--c6)}
.s7 .line,.s7 .ci{stroke:var(--c7)}.s7 .pt,.sw.s7{fill:var(--c7);background:var(--c7)}
.legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.8rem;font-size:.85rem}
.sw{display:inline-block;width:.8rem;height:.8rem;margin-right:.3rem;vertical-align:middle}
.key{width:1.8rem;height:.5rem;margin-right:.3rem;vertical-align:middle}.key line{stroke:var(--fg);stroke-width:2}.legend .unit{color:var(--mute)}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(290px,1fr));gap:.8rem}
.card{border:1px solid var(--grid);border-top:4px solid var(--mute);padding:.4rem .7rem;break-inside:avoid}
.card h3{font-size:1rem;margin:.1rem 0}.card p{margin:.2rem 0}.card .req,.card .small{color:var(--mute);font-size:.85rem}
.card .tps b{font-size:1.05rem}.card table{width:100%;margin:.3rem 0}.card th{font-weight:600}
.c0{border-top-color:var(--c0)}.c1{border-top-color:var(--c1)}.c2{border-top-color:var(--c2)}.c3{border-top-color:var(--c3)}
.c4{border-top-color:var(--c4)}.c5{border-top-color:var(--c5)}.c6{border-top-color:var(--c6)}.c7{border-top-color:var(--c7)}
.note,.empty{color:var(--mute);font-size:.85rem}
table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}th,td{border:1px solid var(--grid);padding:.2rem .45rem;text-align:right}
th:first-child,td:first-child{text-align:left}.wide{overflow-x:auto}
.late{stroke:var(--mute);stroke-dasharray:3 2}.wait{stroke:var(--mute);stroke-width:1}.answer{fill:var(--c0);opacity:.45}
.chunk{stroke:var(--c0);stroke-width:1}.fail{stroke:var(--c1);stroke-width:2}.failtext{fill:var(--c1);font-size:10px}
.verdict-HOLDS{color:var(--c2);font-weight:600}.verdict-FAILS,.verdict-DOES{color:var(--c1);font-weight:600}.verdict-INCONCLUSIVE{color:var(--warnb);font-weight:600}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.1rem 1rem}dt{color:var(--mute)}dd{margin:0;word-break:break-all}
@media print{:root{--fg:#000;--bg:#fff}body{max-width:none;padding:0;font-size:12px}.charts{display:block}figure{break-inside:avoid;margin-bottom:1rem}
.wide{overflow:visible}table{font-size:.72rem}th,td{padding:.1rem .25rem}.cards{grid-template-columns:repeat(2,1fr)}h2{break-after:avoid}}
</style></head><body>
<h1>{{.Title}}</h1>
<section id="headline">
{{range .Problems}}<p class="warn problem">{{.}}</p>{{end}}
{{if .Answers}}<h2>Answers</h2>{{range .Answers}}<p class="answer-line">{{.}}</p>{{end}}{{end}}
{{if .Claims}}<h2>Claims</h2><div class="wide"><table id="claims"><thead><tr><th>claim</th><th>verdict</th><th>measured</th><th>why</th></tr></thead>
<tbody>{{range .Claims}}<tr><td>{{.Claim}}</td><td class="verdict-{{.Verdict}}">{{.Verdict}}</td><td>{{.Measured}}</td><td>{{.Why}}</td></tr>{{end}}</tbody></table></div>{{end}}
{{with .Summary}}<h2>Summary</h2><div class="cards" id="summary">{{range .Cards}}<article class="card c{{.Colour}}" data-label="{{.Label}}" data-level="{{.Level}}">
<h3>{{.Label}}{{if .Level}} · {{.Level}}{{end}}</h3><p class="req">{{.Requests}} · {{.RunsText}}</p>
{{if not .AllFailed}}<p class="tps">per stream <b>{{.PerStream}}</b> <span class="small">tok/s</span><br>aggregate <b>{{.Aggregate}}</b> <span class="small">tok/s</span></p>
<table class="lat"><thead><tr><th>ms</th>{{range $.Summary.Percentiles}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Latencies}}<tr><th>{{.Name}}</th>{{range .Cells}}<td>{{.}}</td>{{end}}</tr>{{end}}</tbody></table>{{end}}
{{if .Server}}<p class="small">server: {{.Server}}</p>{{end}}{{if .Memory}}<p class="small">memory: {{.Memory}}</p>{{end}}
{{if .Warnings}}<p class="small">warnings {{range $i, $w := .Warnings}}{{if $i}}, {{end}}{{$w}}{{end}}</p>{{end}}
{{if .Versus}}<p class="small vs">{{.Versus}}</p>{{end}}</article>{{end}}</div>
{{range .Notes}}<p class="note">{{.}}</p>{{end}}<p class="note">{{.Legend}}</p>{{end}}
{{if .Warnings}}<h2>Trust warnings</h2>{{range .Warnings}}<p class="warn" id="{{.ID}}">{{.Message}}{{if .Where}} ({{.Where}}){{end}} <a href="#ev-{{.ID}}">evidence</a></p>{{end}}{{end}}
</section>
{{if .Charts}}<h2>Charts</h2><div class="charts">{{range .Charts}}{{.}}{{end}}</div>{{end}}
{{if .Timelines}}<h2>Timelines</h2><p class="note">One run per label and load level: each row is a request.</p>{{range .Timelines}}{{.}}{{end}}{{end}}
<section id="measured"><h2>What was measured</h2>
{{if .When}}<p>Report made {{.When}}.</p>{{end}}
{{range .Traces}}<dl class="trace">
<dt>label</dt><dd>{{.Label}}</dd><dt>model</dt><dd>{{.Model}}</dd><dt>server API</dt><dd>{{.API}}{{if .Simulated}} (simulated server{{if .SimProfile}}, profile {{.SimProfile}}{{end}}{{if .SimTimeScale}}, run at time scale {{.SimTimeScale}}: its times are the profile's ×{{.SimTimeScale}}{{end}}){{end}}</dd>
{{if .URL}}<dt>server</dt><dd>{{.URL}}</dd>{{end}}{{if .Host}}<dt>client host</dt><dd>{{.Host}}</dd>{{end}}{{if .Started}}<dt>started</dt><dd>{{.Started}}</dd>{{end}}
<dt>workload digest</dt><dd>{{.WorkloadDigest}}</dd><dt>tokenizer</dt><dd>{{.Tokenizer}}</dd><dt>file</dt><dd>{{.Path}}</dd>
<dt>records</dt><dd>{{.Records}} ({{.Warmup}} warm-up skipped){{if .Truncated}}, truncated tail{{end}}</dd>
{{if .Shards}}<dt>shards</dt><dd>{{.Shards}} on {{.ShardHosts}} hosts</dd>{{end}}
</dl>{{end}}
</section>
{{range .Tables}}<h2>{{.Title}}</h2><div class="wide"><table><thead><tr>{{range .Columns}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</tbody></table></div>
{{range .Notes}}<p class="note">{{.}}</p>{{end}}{{end}}
{{if .Warnings}}<h2>Evidence</h2>{{range .Warnings}}<p id="ev-{{.ID}}"><b>{{.Code}}</b>{{if .Where}} ({{.Where}}){{end}}: {{.Evidence}}</p>{{end}}{{end}}
<p class="note">Made by llmreplay report. docs/METRICS.md defines every metric.</p>
</body></html>
`))
