package gate

import (
	"math"

	"github.com/perfgate/perfgate/internal/robust"
)

// This file exports, for reports outside this package (the static site),
// the pieces of the gate's model that a chart must agree with: how results
// are grouped into series, which results are invalid on their own, and the
// noise band and change points of a window of values.

// SeriesIdentity groups samples into series exactly as Check, Compare and
// ReadTrend do: benchmark, identity labels (all labels but
// DescriptiveLabels and the configured ignore_labels) and testbed.
type SeriesIdentity struct{ id identity }

// NewSeriesIdentity returns the identity of a configuration's
// ignore_labels (Config.IgnoreLabels).
func NewSeriesIdentity(ignoreLabels []string) SeriesIdentity {
	return SeriesIdentity{id: newIdentity(ignoreLabels)}
}

// Key returns the series key of a sample: equal keys are one series.
func (s SeriesIdentity) Key(x *Sample) string { return s.id.key(x) }

// Labels returns the identity labels of a sample with its testbed under
// TestbedLabel, as history and compare show them; nil when none.
func (s SeriesIdentity) Labels(x *Sample) map[string]string { return s.id.displayLabels(x) }

// InvalidReason says why a sample must not be used as a baseline on its
// own (the store's reason, or too many failed requests); "" when valid.
func InvalidReason(x *Sample) string { return selfInvalid(x) }

// Band is the gate's noise model of a window of values, in the values'
// own unit.
type Band struct {
	// Start is the index of the first value of the window's last segment
	// (its current level): the values from Start on make the reference.
	Start int
	// Ref is the reference level: the median of the last segment.
	Ref float64
	// Lo and Hi bound the values one result can take without being
	// outside the noise band: the reference times exp(±2.75 × the noise
	// of one value against the reference median).
	Lo, Hi float64
}

// MinBandWindow is the number of measured commits the noise band needs.
const MinBandWindow = minWindow

// NoiseBand computes the band the gate's noise-band method uses for a
// window of per-commit medians, oldest first. ok is false when the window
// is shorter than MinBandWindow, holds a value that is not positive and
// finite (the gate works on logarithms), or shows no noise.
func NoiseBand(values []float64) (b Band, ok bool) {
	if len(values) < minWindow || !allPositive(values) {
		return Band{}, false
	}
	for _, v := range values {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return Band{}, false
		}
	}
	nb := noiseBand(logs(values))
	if nb.sigma <= 0 || math.IsNaN(nb.sigma) {
		return Band{}, false
	}
	half := zCritical * nb.sigma * math.Sqrt(1+robust.MedianVar(nb.segN))
	return Band{Start: nb.segStart, Ref: math.Exp(nb.ref), Lo: math.Exp(nb.ref - half), Hi: math.Exp(nb.ref + half)}, true
}

// ChangePoints returns the indexes where a new level starts in values
// (oldest first), as the gate cuts its windows: binary segmentation on the
// logarithms of positive values, at most a few cuts. It returns nil when
// no level shift is found or the values are not all positive and finite.
func ChangePoints(values []float64) []int {
	if len(values) < 2*minSegment || !allPositive(values) {
		return nil
	}
	starts := changePoints(logs(values))
	if len(starts) <= 1 {
		return nil
	}
	return starts[1:]
}

// LegacyKey is the key s would have without its testbed: the key of the
// results stored before perfgate recorded testbeds.
func (s SeriesIdentity) LegacyKey(x *Sample) string { return s.id.legacyKey(x) }

// IdentityLabels are the identity labels of a sample without its testbed
// (nil when none); Testbed gives that.
func (s SeriesIdentity) IdentityLabels(x *Sample) map[string]string { return s.id.labels(x.Labels) }

// Testbed is the testbed that identifies a sample's series ("" when none
// was recorded or ignore_labels lists "testbed").
func (s SeriesIdentity) Testbed(x *Sample) string { return s.id.testbed(x) }

// Matches reports whether the rule applies to a benchmark (its glob).
func (r Rule) Matches(benchmark string) bool { return r.matches(benchmark) }

// SelfInvalid says why a result is invalid on its own (the store's
// reason, or too many failed requests); "" for a valid one. It is
// InvalidReason under the name watch uses.
func SelfInvalid(s *Sample) string { return selfInvalid(s) }
