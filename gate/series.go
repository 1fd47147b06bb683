package gate

// SeriesIdentity is gate's series identity for other stages (watch): two
// results belong to one series when they have the same benchmark, the
// same identity labels (all labels but DescriptiveLabels and the rules
// file's ignore_labels) and the same testbed.
type SeriesIdentity struct{ id identity }

// NewSeriesIdentity returns the identity with ignoreLabels (the rules
// file's ignore_labels) ignored beyond DescriptiveLabels.
func NewSeriesIdentity(ignoreLabels []string) SeriesIdentity {
	return SeriesIdentity{id: newIdentity(ignoreLabels)}
}

// Key is the series key of s: benchmark, identity labels and testbed.
func (si SeriesIdentity) Key(s *Sample) string { return si.id.key(s) }

// LegacyKey is the key s would have without its testbed: the key of the
// results stored before perfgate recorded testbeds.
func (si SeriesIdentity) LegacyKey(s *Sample) string { return si.id.legacyKey(s) }

// Labels are the identity labels of s (nil when none).
func (si SeriesIdentity) Labels(s *Sample) map[string]string { return si.id.labels(s.Labels) }

// Testbed is the testbed that identifies s's series ("" when none was
// recorded or ignore_labels lists "testbed").
func (si SeriesIdentity) Testbed(s *Sample) string { return si.id.testbed(s) }

// Matches reports whether the rule applies to a benchmark (its glob).
func (r Rule) Matches(benchmark string) bool { return r.matches(benchmark) }

// SelfInvalid says why a result is invalid on its own (the store's
// reason, or too many failed requests); "" for a valid one.
func SelfInvalid(s *Sample) string { return selfInvalid(s) }
