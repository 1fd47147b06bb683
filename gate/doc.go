// Package gate owns perfgate's judgement: the rules (.perfgate.yml and the
// --rule shorthand), the choice of a baseline among a commit's first-parent
// ancestors, the noise-aware statistics that turn two sets of numbers into
// a verdict, and the reports (text, markdown, json) of check, compare and
// history.
//
// gate knows nothing of git, the store or GitHub. The CLI adapts them to
// two small interfaces: Graph (merge-base and first-parent walks) and
// History (the stored results of a batch of commits), and hands gate
// resolved commit ids.
//
// # Rules
//
// A rule names a metric (canonical name or display label, as package
// metric resolves them) and a bound: max_regression in percent, worse in
// the metric's direction; or an absolute max or min. A rule may be limited
// to benchmarks matching a glob (path.Match syntax). Metrics perfgate does
// not know need an explicit direction. Without any rule, DefaultRules
// applies and the report says so:
//
//	mean_ttft_ms, mean_tpot_ms, mean_itl_ms          max_regression 5%
//	p99_ttft_ms, p99_tpot_ms, p99_itl_ms             max_regression 10%
//	request_throughput, output_throughput,
//	total_token_throughput                           max_regression 5%
//	failed                                           max 0
//
// --rule values add to the rules file; when they are given, the file's
// rules still apply (the default set does not).
//
// # Series and identity labels
//
// Results are compared only within a series: the same benchmark name and
// the same identity labels. Every label is an identity label except the
// descriptive ones listed in DescriptiveLabels (dates, file names, hosts)
// and those the rules file lists under ignore_labels. A benchmark measured
// on both sides under different identity labels is reported as a mismatch
// and not compared.
//
// # Baseline
//
// The baseline of a series is its result at the merge-base of head and the
// base branch or, when the merge-base has none, at the nearest first-parent
// ancestor of the merge-base within max_distance commits that has a valid,
// clean (not dirty) result for that series. When head is itself on the
// base branch (the merge-base is head) and its results are committed ones,
// the search starts at head's first parent; a dirty working-tree run of
// head may use head's stored result as its baseline. The noise window of
// a series is its valid results at the baseline commit and the measured
// first-parent commits before it, up to window commits.
//
// # Validity
//
// A result whose failed requests exceed 5% of completed+failed, or whose
// completed count is more than 5% below the baseline's (for a baseline
// candidate: below the median of its window), is invalid. An invalid head
// fails the check with the reason, and its other metrics are not compared:
// a faster run that served half the requests is not an improvement. An
// invalid result never becomes a baseline or enters a window.
//
// # Statistics
//
// For each series and relative rule, in order of the data available:
//
//  1. Five or more runs on both sides: a one-sided Mann-Whitney U test
//     (go-moremath) of "head is worse", Holm-corrected across all such
//     checks of the report, alpha 0.01. Fail only if significant and the
//     median change is beyond the threshold; beyond the threshold but not
//     significant is inconclusive.
//  2. A window of five or more measured commits (one value per commit, the
//     median of its runs): the window's log values are cut at change
//     points, the reference level is the median of the segment that holds
//     the baseline commit, and the noise is a robust scale of the log
//     values within their segments. Fail only if the change against the
//     reference is beyond the threshold and its robust z (the log change
//     over the noise of one run and of the reference median) exceeds 2.75;
//     beyond the threshold within that band is inconclusive. When the
//     window is short but the baseline commit has five or more runs, those
//     runs give the reference and the noise.
//  3. Otherwise the literal threshold against the baseline's value, and
//     the check is marked unqualified.
//
// Change points: binary segmentation of the window, each split placed
// where the two sides fit their own medians best (least absolute
// deviation) and kept if the difference of the medians exceeds 3.5
// standard errors; the noise for that test comes first from successive
// differences (a step disturbs only one), then from the segments found,
// and the segmentation is repeated once with it. Segments are at least two
// commits long.
//
// Noise: Rousseeuw and Croux's Qn over the pairs of values within each
// segment (2.2219 times the first quartile of their distances, with a
// small-sample correction). It is as robust as the MAD (an outlier run on
// main does not widen the band) and twice as efficient, which is what lets
// one run be judged against 20: with the MAD, 15% regressions were caught
// 89% of the time at the same false-alarm rate; with Qn 93%.
// quality_test.go measures the rates on the design's experiment (ten
// series, 3% lognormal noise, 20 measured main commits, one run per PR,
// rule 3%): about 1% of unchanged PRs fail (a literal 3% ratio fails about
// 25%), about 93% of 15% regressions are caught, and when main stepped up
// 15% six commits before the merge-base about 1% of unchanged PRs fail
// (an uncut window, 30%).
//
// Changes are reported in percent of the value compared against (the
// reference level in case 2). Improved means better than the threshold
// with the same evidence a failure would need (unqualified in case 3).
// Absolute bounds (max, min) apply to the median of head's runs and need
// no baseline.
//
// # Paired runs (perfgate ab)
//
// CheckPaired (paired.go) judges runs of base and head made interleaved on
// one machine (A B B A ...): pair i is a base run and the head run next to
// it in time, so what drifts during the session (a machine warming up or
// throttling, a neighbour's load) moves both alike. Per series and
// relative rule, d_i = log(head_i/base_i); the shift is the Hodges-Lehmann
// estimate of d (the median of its pairwise means) and the test is a
// one-sided paired t test on d at alpha 0.01 (Paired). A paired t test
// decides from three consistent pairs, where a Wilcoxon signed-rank test
// cannot go below 1/2^n (0.031 at five pairs); an outlying pair inflates
// its variance, so heavy tails make it more conservative, not less. A
// check fails when the shift is worse than the limit and significant,
// is inconclusive when worse but not significant, and is improved when
// better than the limit and significant the other way. The metrics of one
// benchmark are strongly correlated, so there is no correction across
// them. Absolute rules apply to the median of head's runs, and an invalid
// head run fails its series on validity.
//
// # Reports
//
// A check report carries Warnings, the caveats of its verdict
// (unqualified or inconclusive checks, a window cut at a change point,
// repeated runs too few for Holm's correction to reach alpha, label
// mismatches, a dirty head); every format shows them. Values print with
// at least two decimals and five significant digits, trailing zeros
// trimmed (299.96, not 300; a whole number as 66), and changes with two
// decimals, more when a change would otherwise print as the round
// threshold it just crossed (-2.001%, not -2.00%).
//
// Check, Compare and ReadTrend return documents with WriteText (an
// aligned table, the verdict first, ANSI colour when asked), WriteMarkdown
// (for a PR comment or job summary: the table, collapsible details and a
// mermaid xychart of each failing metric over the base branch's recent
// history) and WriteJSON; the trend also writes CSV. Write picks one by
// the -o name. ReadReport reads a check report back from JSON so that a
// later step can publish it.
package gate
