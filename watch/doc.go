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
// on a log scale when all values are positive. Detect first takes out
// what would otherwise be read as persistent noise or as changes:
//
//   - a season (deseason): the period, 2 to 60 points with four cycles
//     in the series, at which successive differences correlate most,
//     clearly beyond chance (at least 0.3 and 4/sqrt(n), and half that
//     at twice the period); the profile, per phase, is the median of
//     the points' distances from a centred moving average over one
//     period, and it is taken out only when that cuts the variance of
//     successive differences by a third. Months of a year, days of a
//     week, hours of a day; a thermal cycle or a sawtooth of a benchmark
//     history moves too little from one point to the next to pass, and
//     is left to the noise model;
//   - a trend through the whole series (detrend): the median slope over
//     lags of max(2·MinSegment, n/15) points, when each third of the
//     series agrees with it (same sign, within a factor of two), it is
//     beyond two standard errors and it moves the level by more than
//     2·MinZ point noises. The series is then segmented twice more,
//     without the trend and without a common slope re-fitted within the
//     levels found, and the result kept only when it explains the
//     series with fewer changes and at least one (growth around a
//     recession is the recession, not drifts either side of it; a trend
//     alone is already no change, step 5; a drift over part of a series
//     that a loose trend would swallow stays a drift), or, where nothing
//     was found, with changes at under half the noise that do not take
//     the trend back (a trend that hid a drop by swelling the noise; a
//     sawtooth's resets do take its rises back). The levels of a change
//     found so are given as they are at the change, trend put back.
//
// Then it:
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
//  6. where the noise of a level is at least twice that of a point (a
//     random walk, a price), adds every abrupt jump segmentation could
//     not see: one successive difference of at least 15 noises of a
//     difference, at least MinSegment points from either end and from
//     every change found, whose new level holds (the medians of
//     MinSegment and 2·MinSegment points after it stay at least half the
//     jump from those before, the same way). A crash of twenty moves'
//     worth on a random walk hides in its wander, yet no one would miss
//     it; a spike falls back;
//  7. reports a change in the last points, which segmentation cannot
//     confirm, as suspected (Step.Suspected): the last 2 to MinSegment-1
//     points all lie more than 3 point noises beyond the last level, on
//     one side, and their median differs from it by 4.5 standard
//     errors. A change with fewer than 2·MinSegment points after it and
//     under 1.5 times that evidence is suspected too. Watch shows it as
//     "suspected", never as open (no alert, no failed run) until more
//     points confirm it; one wild last point is not a change;
//  8. drops a step under NoiseSized (0.75) point noises whose evidence
//     is under 1.5 MinZ: a level that shifts a little at irregular times
//     between long flat stretches is no change (issue 38);
//  9. where nothing is found, looks for a creep (issue 38: a trend taken
//     out never hides a change of level that breaks the rule): on the
//     clipped values, a level (from the best flat-then-line bend, when
//     it leaves MinSegment points), a line of at least 4·MinSegment
//     points, and a level after it when that fits better than the line
//     by 2·log n point noises squared; the residuals must be white at
//     the point noise (robust scale at most 1.5 times it: a random walk,
//     a cycle or a rise that turns into a fall is no creep), and the
//     move at least MinMagnitude and CreepZ·MinZ standard errors. It is
//     reported as a drift (Step.Drift);
//  10. where no confirmed change is found and no creep either, looks
//     for a rise that turns into a fall (or a fall into a rise) with no
//     level anywhere, which segmentation reads as wander (turn): the
//     best continuous two-piece line (every bend, O(1) each), each
//     piece at least 4·MinSegment points, slopes opposite, residuals
//     white as for a creep, each piece's move at least MinMagnitude and
//     CreepZ·MinZ standard errors: two drifts, the second still moving;
//  11. places the turn between two drifts the opposite way where their
//     lines cross, when the stretch between them (a level the hinges
//     made up) fits the lines carried on no worse than a level by more
//     than 2·log n point noises squared (turns); and ends a drift
//     followed by a step at the step (a creep ended by a fix) when one
//     line up to the step fits no worse than the drift's line and a
//     level by that much (runInto);
//  12. marks the last change, a drift, as still moving (Step.Moving; its
//     end the last point, its new level the drift's line there) when
//     fewer than 2·MinSegment points follow it, or when they do not fit
//     a level of their own better than the drift's line carried on by
//     4·log n point noises squared.
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
// levels around zero); 126 series of 19 other shapes, of the kinds public
// change-point collections hold rather than benchmark histories
// (othershapes_test.go: monthly figures with a trend and a season, with
// and without a recession; yearly growth whose rate halves; daily counts
// with a weekly cycle; hourly traffic with a daily cycle; series of
// 30-50 points; a slope that starts; sensor levels among outliers; AR(1)
// noise with steps; a smooth wander; a step with a variance change; a
// 3% step under the 5% default; then, written after the method above
// and kept apart until measured, prices as random walks with and
// without a crash, monthly passengers that grow and swing and drop, a
// short noisy series with one shift, yearly epidemic bursts, quality
// control shifts of 1.5-3 sigma), written from those descriptions, not
// from any collection's data; and the 73 real CI series of
// ../shared/realnoise (26,961 points, 473 marked level shifts of 10
// points or more, found by an algorithm). A detection within 5 points of
// a true change is a hit (each matched once); the detections are the
// points watch reports: each change's first_bad, and a drift's
// drift_end when the drift has ended. P, R and F1 are pooled over the
// series, then mean F1 and segment cover per series (the start counted
// as a change in both), and false changes per 100 points on the
// change-free series (free). Binary segmentation and PELT are the R
// changepoint package's defaults (normal mean-change cost in units of
// the successive-difference noise, MBIC penalty 3·log n, BinSeg at most
// 5 changes; realnoise_test.go):
//
//	                   simulated (150)                 other shapes (126)              realnoise (73)
//	                   P     R     F1    mF1   cover   P     R     F1    mF1   cover   P     R     F1    mF1   cover
//	watch before #23   0.259 0.692 0.377 0.770 0.806   -                               0.936 0.835 0.883 0.909 0.890
//	watch, c00c060     0.967 0.725 0.829 0.950 0.933   0.455 0.700 0.551 0.817 0.773   0.855 0.825 0.840 0.854 0.818
//	watch before #38   0.843 0.892 0.866 0.969 0.974   0.979 0.947 0.963 0.974 0.966   0.840 0.901 0.869 0.894 0.898
//	watch (this)       0.863 0.897 0.879 0.970 0.974   0.980 0.955 0.968 0.978 0.973   0.846 0.896 0.871 0.895 0.896
//	binary segm.       0.210 0.808 0.333 0.647 0.783   0.264 0.800 0.397 0.628 0.704   0.567 0.376 0.452 0.635 0.760
//	PELT               0.064 0.842 0.118 0.518 0.572   0.056 0.967 0.105 0.465 0.504   0.110 0.987 0.198 0.436 0.659
//
// The other-shapes columns are its 126 series before issue 38 (the
// monthly trend +30% relabelled a creep, as is the simulated
// whole-series trend +20%, which "watch before #38" scores as
// change-free); issue 38's 42 series of new shapes (creeps moving,
// stopped, fixed, in a season; rises that turn into falls; dips inside
// growth; noise-sized jumps) score P 0.934 R 0.950 F1 0.942, mean F1
// 0.965, cover 0.989 (before: 0.658 0.800 0.722, 2 false changes on the
// noise-sized jumps; binary segmentation F1 0.156, PELT 0.097).
//
// False changes per 100 points on the change-free series: watch 0.00 on
// all three (66 simulated, 34 other, 6 short real series; c00c060: 0.00,
// 0.96, 0.00); binary segmentation 1.14, 1.12 and 1.09; PELT 5.32, 7.97
// and 1.09. On the six shapes written last, before the jumps (step 6)
// and the trend that hid a drop came in, watch scored F1 0.734 (0.291
// at c00c060); both came from what those shapes showed. The row
// c00c060 is watch as it listed changes before the season, the trend
// and the listing of changes below the threshold (which it counted in a
// warning) came in, and with a drift's first_bad at its end: below the
// threshold it hid real shifts (on realnoise, 35 of its 44 such changes
// lie at marked shifts), and a season or a trend around a step hid the
// step (0 of 12 found in the monthly and hourly shapes; now 10).
//
// On the simulated series the detector before #23 read persistent noise
// as steps (5-7 per random walk, AR(1) series, cycle or sawtooth), missed
// a change 3 points before the end, and placed a drift at its far end;
// it kept its lead on heavy tails, spikes and outlier blocks, which this
// one keeps (clipping is unchanged). Real CI noise is itself mildly
// persistent (residual ρ 0.1-0.5), which the level noise prices in, and
// the thresholds (split 1.8, prune 4.5) were swept for it (split 1.6-2.1
// by prune 4-5: the best realnoise F1; the simulated F1 moves by 0.03
// over that range). Persistence costs power: an 8% step on a random
// walk or in a slow ±1.5% cycle scores a mean F1 of 0.86 and 0.83 (1.00
// on white noise). Where it still loses: a step inside a drift (mean F1
// 0.53: the drift's stretches either side of the jump are cut as steps
// of their own; reporting them as drifts instead cost 0.04 F1 on
// realnoise, where such stretches are rarely drifts), and a growth rate
// that changes with no change of level (0.67: a slope change is not a
// change of level, and watch does not report it). The marked shifts of
// realnoise were themselves found by an algorithm, so its figures
// measure agreement with it; the synthetic tests (detect_test.go,
// season_test.go) pin exact positions on known steps.
// E-divisive means as Apache Otava runs it (edivisive_test.go) scores F1
// 0.435 on realnoise.
//
// Detect costs O(n log n) per round; CPU per call, measured with
// go test ./watch -run '^$' -bench . -benchtime 30x on a loaded machine
// (the detector before the season and the trend in brackets): 2.6-3.0
// ms (2.2) on 10,000 points with one step, 7-11 ms (6.4-7.9) on 10,000
// points of wander that take all three rounds, 15 ms (15) on all of
// realnoise (26,961 points). The season is looked for in the latest
// 2,048 differences (a season scan costs 0.1 ms on them); a trend, when
// found, costs two more segmentations. In the watch of 10,000 commits x
// 300 series (cmd/perfgate BenchmarkWatch10kProcess), a CPU profile puts
// the season and the trend at 3% of the process; detection as a whole
// at a third, reading the history at the rest.
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
