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
//  3. segments under a noise model fitted to its own residuals. Noise
//     from successive differences is tiny on a random walk, a thermal
//     cycle, a sawtooth or blocks of slow runners (persistent noise),
//     which it would cut into steps of tens of noise units; so each
//     round segments at the noise of a level (binary segmentation with
//     the CUSUM statistic of a change in mean, splitting while the
//     largest statistic exceeds 1.8·sqrt(log n) level noises and both
//     sides keep MinSegment points; then pruning, weakest first, every
//     cut whose neighbouring levels (medians) differ by less than 4.5
//     standard errors of the difference of two medians), fits the model
//     to the residuals around the levels found, and segments again, up
//     to three rounds, until the cuts or the noise hold (the noise never
//     shrinks). The model: the point noise is the larger of the
//     differences' and the residuals' robust scale; the noise of a
//     level is the point noise times the square root of the smaller of
//     the AR(1) long-run factor (1+ρ)/(1-ρ), ρ the residuals' lag-1
//     autocorrelation (at most 0.95), and the Newey-West factor of
//     their autocorrelations up to 2·MinSegment lags (a short season
//     averages out over a level; AR(1) alone would read it as
//     persistence). Pruning also inflates the standard error of each
//     cut by the lag-1 autocorrelation of its two segments' own
//     residuals around their lines (persistence local to the cut);
//  4. moves each cut of the last round, within MinSegment points, to the
//     split that fits two medians best, drops a cut that leaves fewer
//     than MinSegment points on a side, and prunes again;
//  5. reports a run of same-direction cuts as one drift when the levels
//     between them keep moving (their pooled least-squares slope
//     statistic exceeds 1.64), with its ends where the levels either
//     side bend into a line through it (least-squares hinge fits), not
//     at the staircase's first and last cuts. A cut of the run where
//     lines fitted to up to 2·MinSegment points either side differ by
//     4.5 standard errors (point noise) and the smallest change worth
//     reporting is a jump inside the drift, reported on its own between
//     the drift's stretches either side. A drift over the whole series
//     whose ends bend no more than a line does (hinge against line, less
//     than 2·log n point noises squared) is a trend (runner drift, a
//     slow wander), not a change;
//  6. reports a change in the last points, which segmentation cannot
//     confirm, as suspected (Step.Suspected): the last 2 to MinSegment-1
//     points all lie more than 3 point noises beyond the last level, on
//     one side, and their median differs from it by 4.5 standard
//     errors. A change with fewer than 2·MinSegment points after it and
//     under 1.5 times that evidence is suspected too. Watch shows it as
//     "suspected", never as open (no alert, no failed run) until more
//     points confirm it; one wild last point is not a change.
//
// The size of a change does not prune (it did before issue 23: a 3%
// step of 10 noise units under a 5% rule was merged into its
// neighbours, shifting their levels): every cut the noise cannot
// explain stays a level of its own. A change smaller than the smallest
// change worth reporting (the max_regression of the rule that covers the
// metric, else the rules file's watch min_change, default 5%) is marked
// Minor by Detect. watch lists it with below_threshold set (the text
// and markdown reports list such changes apart, after the others), and
// never opens or alerts on it: the alert threshold is a rule about what
// is worth an issue, not about where the series changed. (Until issue
// 23's second pass they were only counted in a warning, which hid them
// from whoever reads the JSON: on realnoise at the 5% default, 44 of
// 500 changes are Minor, 35 of them at marked shifts; leaving them out
// cost 0.03 F1 and 0.07 segment cover there.)
//
// Chosen by measurement, go test ./watch -run 'Quality' -v, on a
// labelled corpus (quality_test.go): 150 simulated series (25 shapes,
// seeded) of the shapes benchmark histories take (white and
// heavy-tailed noise, random walks, thermal cycles, sawtooths, AR(1)
// noise, blocks of slow runners, bimodal noise, a 12-point season, a
// variance change, trends; small and large steps, steps 3 and 6 points
// before the end, steps on a random walk, in a cycle or a season, drifts
// and a step inside one, steps among outliers, short series, counts,
// levels around zero) and the 73 real CI series of ../shared/realnoise
// (26,961 points, 473 marked level shifts of 10 points or more, found by
// an algorithm). A detection within 5 points of a true change is a hit
// (each matched once); P, R and F1 pooled over the series, then mean F1
// and segment cover per series (the start counted as a change in both),
// and false changes per 100 points on the change-free series (free; 66
// simulated series, and 6 short real ones). Binary segmentation and PELT
// are the R changepoint package's defaults (normal mean-change cost in
// units of the successive-difference noise, MBIC penalty 3·log n,
// BinSeg at most 5 changes; realnoise_test.go):
//
//	                     simulated (150 series)             realnoise (73 series)
//	                     P     R     F1    mF1   cover free  P     R     F1    mF1   cover
//	watch, before #23    0.259 0.692 0.377 0.770 0.806 0.82  0.936 0.835 0.883 0.909 0.890
//	watch (this method)  0.846 0.825 0.835 0.959 0.958 0.00  0.848 0.899 0.873 0.893 0.893
//	binary segmentation  0.210 0.808 0.333 0.647 0.783 1.14  0.567 0.376 0.452 0.635 0.760
//	PELT                 0.064 0.842 0.118 0.518 0.572 5.32  0.110 0.987 0.198 0.436 0.659
//
// On the simulated series the old detector read persistent noise as
// steps (5-7 per random walk, AR(1) series, cycle or sawtooth), missed a
// change 3 points before the end, and placed a drift at its far end; it
// kept its lead on heavy tails, spikes and outlier blocks, which this
// one keeps (clipping is unchanged). On realnoise the new one finds
// more of the marked shifts (recall 0.835 to 0.899) and raises more
// changes the marks do not hold (precision 0.936 to 0.848, 0.28 false
// alarms per 100 points, TestRealNoise): real CI noise is itself mildly
// persistent (residual ρ 0.1-0.5), which the level noise now prices in,
// and the thresholds (split 1.8, prune 4.5) were re-swept for it
// (split 1.6-2.1 by prune 4-5: the best realnoise F1; the simulated F1
// moves by 0.03 over that range). Persistence costs power: an 8% step
// on a random walk or in a slow ±1.5% cycle scores a mean F1 of 0.86
// and 0.83 (1.00 on white noise), and a step inside a drift leaves the
// drift's stretches either side as changes of their own. The marked shifts of realnoise were themselves
// found by an algorithm, so its figures measure agreement with it; the
// synthetic tests (detect_test.go) pin exact positions on known steps.
// E-divisive means as Apache Otava runs it (edivisive_test.go) scores F1
// 0.435 on realnoise.
//
// Detect costs O(n log n) per round; CPU per call, measured with
// go test ./watch -run '^$' -bench . -cpuprofile on a loaded machine,
// old detector in brackets: 2.1 ms (1.8) on 10,000 points with one step,
// 6.7 ms (3.5) on 10,000 points of wander that take all three rounds,
// 13 ms (7.6) on all of realnoise (26,961 points). 10,000 commits of 300
// series thus take about 0.6 s when steady, 2 s if every series
// wanders.
//
// # Reports
//
// For each change: the commit range (the last measured commit at the old
// level and the first at the new one; when commits between them were not
// measured, the perfgate bisect command that narrows it; for a drift, the
// stretch over which the level moved: first_bad is then the first commit
// off the old level, where it began to move, and drift_end the first at
// the new one), the levels
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
const MethodSummary = "clipped CUSUM binary segmentation with median pruning under a noise model fitted to the residuals (persistence-inflated level noise; min segment 5, split 1.8·sqrt(log n), prune 4.5 SE), drifts with their ends, suspected changes at the tip"
