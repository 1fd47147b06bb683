// Package watch owns perfgate watch: change-point detection over the
// stored history of the base branch, per series, and the alerts it
// raises: changes of level (regressions, improvements) and series that
// stopped reporting. It reads history through gate's Graph and History
// and groups results by gate's series identity (benchmark, identity
// labels, testbed); it knows nothing of GitHub nor of the command line,
// and hands alerts to its callers as data (Report, Alerts).
//
// # Method
//
// Each series' metric is taken oldest first, one value per measured
// first-parent commit (the median of the commit's valid, clean results),
// on a log scale when all values are positive. Detect then:
//
//  1. estimates the noise of one point from successive differences (the
//     MAD of the differences over √2, which a level shift disturbs once;
//     their mean absolute value for quantised values);
//  2. clips every point to 3 noise units around the median of the
//     MinSegment (5) points either side, so a single wild value weighs
//     like an ordinary one (heavy tails, spikes);
//  3. runs binary segmentation with the CUSUM statistic of a change in
//     mean, splitting while the largest statistic exceeds
//     2.4·sqrt(log n) noise units and both sides keep MinSegment points;
//  4. prunes, weakest first, every cut whose neighbouring levels
//     (medians) differ by less than 6 standard errors of the difference
//     of two medians, or by less than the smallest change worth reporting
//     (the max_regression of the rule that covers the metric, else the
//     rules file's watch min_change, default 5%);
//  5. moves each cut, within MinSegment points, to the split that fits
//     two medians best, drops a cut that leaves fewer than MinSegment
//     points on a side (so a change is reported only once MinSegment
//     points confirm the new level), and prunes again;
//  6. reports a run of same-direction cuts as one drift when the levels
//     between them keep moving (their pooled least-squares slope
//     statistic exceeds 1.64): a slow drift is reported once.
//
// Chosen by measurement on ../shared/realnoise (73 real CI series, 26,961
// points, 473 marked steps; a detection within 5 points of a marked step
// is a hit), go test ./watch -run TestRealNoise -v:
//
//	watch (this method)                     precision 0.936 recall 0.835 F1 0.883, 0.10 false alarms per 100 points
//	binary segmentation (changepoint BinSeg defaults: MBIC, Q=5)  precision 0.567 recall 0.376 F1 0.452, 0.50 per 100
//	PELT (changepoint defaults: MBIC)       precision 0.110 recall 0.987 F1 0.198, 14.04 per 100
//	E-divisive means (Otava: t-test p<0.001) precision 0.560 recall 0.355 F1 0.435, 0.49 per 100
//
// PELT finds every step but also thousands of short excursions of
// heavy-tailed, autocorrelated real noise; its cost is also quadratic on
// a long history with few changes, where watch must handle 10,000 commits
// in well under a second. The constants (MinSegment 5, split 2.4, prune 6)
// were the best F1 of a sweep of MinSegment 4-10, split 1.2-3.2 and prune
// 3-7 with at most 1 false alarm per 100 points. The marked steps were
// themselves found by an algorithm (level shifts lasting 10 points or
// more), so these figures measure agreement with it; the synthetic tests
// (detect_test.go) pin exact positions on known steps. E-divisive means
// is run as Apache Otava runs it (energy statistic, a Welch t-test at
// p < 0.001 in place of permutations) over the whole series, without
// Otava's sliding 50-point windows; it is O(n²) per split.
//
// # Reports
//
// For each change: the commit range (the last measured commit at the old
// level and the first at the new one; when commits between them were not
// measured, the perfgate bisect command that narrows it; for a drift, the
// stretch over which the level moved), the levels
// before and after (medians), the change in percent and in noise units,
// a confidence (1 - p of a two-sided Mann-Whitney test of the 30 points
// either side) and its kind under the rules: a regression or improvement
// by the metric's direction (the rule's, else the metric's own), a plain
// change when the direction is unknown. A regression is open while the
// series' current level is still worse than the level before it by the
// threshold; it closes when the series recovers or the change is
// accepted (Accepted: an acceptance in its range, or up to AcceptSlack
// measured points beyond either end).
//
// Alerts groups the open regressions of one series whose commit ranges
// overlap or touch into one alert (one issue per change, listing every
// metric); a missing series is an alert of its own.
//
// A series that reported on each of the last watch missing_after (default
// 5) measured commits before its last result, and on none of the measured
// commits since, is reported missing.
package watch

// MethodSummary names the method in reports.
const MethodSummary = "clipped CUSUM binary segmentation with median pruning (min segment 5, split 2.4·sqrt(log n), prune 6 SE)"
