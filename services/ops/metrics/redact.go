package metrics

import (
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// TenantLabels are the labels whose values say whose work a series is: a
// job (its id, or the name a client gave it for jobs recorded before
// internal ids) and a client. Only the operator may read them, as only the
// operator may call Cluster/Get; everyone else's /metrics has them summed
// away (PublicHandler).
var TenantLabels = []string{LabelJob, "client"}

// PublicHandler serves the registry with TenantLabels aggregated away:
// what an unauthenticated scraper of /metrics gets (services/ops/admin).
func (r *Registry) PublicHandler() http.Handler {
	return promhttp.HandlerFor(Redact(r.reg, TenantLabels...), promhttp.HandlerOpts{})
}

// Redact returns a gatherer whose series carry none of labels: the series
// of a family that differ only in them are merged into one, counters,
// gauges and untyped values summed, histograms bucket by bucket. A summary's
// quantiles cannot be merged, so its series that carry one of labels are
// left out. A family without those labels is passed through as it is.
//
// A sum over jobs falls when a job is dropped, which Prometheus reads as a
// counter reset; a scraper that wants each job's series authenticates.
func Redact(g prometheus.Gatherer, labels ...string) prometheus.Gatherer {
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		fams, err := g.Gather()
		out := fams[:0]
		for _, f := range fams {
			// A family left with no series is left out: the text format
			// has no empty family.
			if f = redactFamily(f, labels); len(f.GetMetric()) > 0 {
				out = append(out, f)
			}
		}
		return out, err
	})
}

func redactFamily(f *dto.MetricFamily, labels []string) *dto.MetricFamily {
	carries := func(m *dto.Metric) bool {
		return slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool { return slices.Contains(labels, l.GetName()) })
	}
	if !slices.ContainsFunc(f.GetMetric(), carries) {
		return f
	}
	merged := map[string]*dto.Metric{}
	var keys []string
	for _, m := range f.GetMetric() {
		if f.GetType() == dto.MetricType_SUMMARY && carries(m) {
			continue
		}
		var kept []*dto.LabelPair
		var key strings.Builder
		for _, l := range m.GetLabel() {
			if !slices.Contains(labels, l.GetName()) {
				kept = append(kept, l)
				key.WriteString(l.GetName() + "\x00" + l.GetValue() + "\x00")
			}
		}
		k := key.String()
		into, ok := merged[k]
		if !ok {
			into = zero(m, kept)
			merged[k] = into
			keys = append(keys, k)
		}
		add(into, m)
	}
	sort.Strings(keys)
	out := &dto.MetricFamily{Name: f.Name, Help: f.Help, Type: f.Type}
	for _, k := range keys {
		out.Metric = append(out.Metric, merged[k])
	}
	return out
}

// zero is a series of m's kind with the given labels and nothing counted
// (m's buckets, empty), for add to add to.
func zero(m *dto.Metric, labels []*dto.LabelPair) *dto.Metric {
	z := &dto.Metric{Label: labels}
	switch {
	case m.Counter != nil:
		z.Counter = &dto.Counter{Value: new(float64)}
	case m.Gauge != nil:
		z.Gauge = &dto.Gauge{Value: new(float64)}
	case m.Untyped != nil:
		z.Untyped = &dto.Untyped{Value: new(float64)}
	case m.Histogram != nil:
		z.Histogram = &dto.Histogram{SampleCount: new(uint64), SampleSum: new(float64)}
		for _, b := range m.Histogram.GetBucket() {
			z.Histogram.Bucket = append(z.Histogram.Bucket, &dto.Bucket{UpperBound: b.UpperBound, CumulativeCount: new(uint64)})
		}
	}
	return z
}

// add adds m's values to into's (of the same family; a histogram's series
// share their buckets, as a HistogramVec's do).
func add(into, m *dto.Metric) {
	switch {
	case into.Counter != nil:
		*into.Counter.Value += m.GetCounter().GetValue()
	case into.Gauge != nil:
		*into.Gauge.Value += m.GetGauge().GetValue()
	case into.Untyped != nil:
		*into.Untyped.Value += m.GetUntyped().GetValue()
	case into.Histogram != nil:
		h, o := into.Histogram, m.GetHistogram()
		*h.SampleCount += o.GetSampleCount()
		*h.SampleSum += o.GetSampleSum()
		for i, b := range o.GetBucket() {
			if i < len(h.Bucket) && h.Bucket[i].GetUpperBound() == b.GetUpperBound() {
				*h.Bucket[i].CumulativeCount += b.GetCumulativeCount()
			}
		}
	}
}
