package analyze

// Quantile is the q-quantile of a per-request or per-token metric (ttft,
// tpot, itl, e2e …) over g's requests, with its 95% interval, computed from
// the same merged distribution as the statistics a group keeps by name
// (setDistValues): a view that needs a percentile the registry does not
// name (the summary's p95) reads it here, not from a second definition.
// It reports false for an unknown name or a metric of another scope.
func (g *Group) Quantile(metric string, q float64) (Value, bool) {
	i, ok := metricIndex[metric]
	if !ok {
		return Value{}, false
	}
	if s := Metrics[i].Scope; s != PerRequest && s != PerToken {
		return Value{}, false
	}
	var all Dist
	for _, r := range g.runs {
		all.Merge(&r.dists[i])
	}
	c, lo, hi := all.QuantileCI(q, Confidence)
	return Value{c, lo, hi, all.N()}, true
}
