package slo

import "sync"

// Stored is a run's stored request summary (store.Run.Requests), decoded
// on first use: a check reads the summaries of only the runs whose
// percentiles it reports, not of every run of the window.
type Stored struct {
	b    []byte
	once sync.Once
	s    *Summary
	err  error
}

// Lazy returns the stored summary b, decoded when first asked; nil when b
// is empty (the run kept no per-request measurements).
func Lazy(b []byte) *Stored {
	if len(b) == 0 {
		return nil
	}
	return &Stored{b: b}
}

// Summary decodes the summary (once).
func (l *Stored) Summary() (*Summary, error) {
	l.once.Do(func() { l.s, l.err = Unmarshal(l.b) })
	return l.s, l.err
}

// Percentile is Summary.Percentile of the decoded summary.
func (l *Stored) Percentile(kind string, p, conf float64) (Quantile, error) {
	s, err := l.Summary()
	if err != nil {
		return Quantile{}, err
	}
	return s.Percentile(kind, p, conf)
}
