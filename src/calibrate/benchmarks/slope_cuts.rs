//! The slope-change cuts of [`fit_loggp_from_benchmarks`](super::fit_loggp_from_benchmarks)
//! inside the step-free stretches of a latency series.

use super::BenchmarkFitConfig;
use super::fit::least_absolute;
use crate::calibrate::steps::{self, LineSums, best_split};

/// Adds slope-change cuts inside the step-free stretches (see [`fit_loggp_from_benchmarks`](super::fit_loggp_from_benchmarks)).
pub(super) fn add_slope_cuts(
    lat: &[(u64, f64)],
    prefix: &[LineSums],
    cuts: &mut Vec<usize>,
    config: &BenchmarkFitConfig,
) {
    const MIN_POINTS: usize = 3;
    let n = lat.len();
    let noise = config.steps.noise_floor;
    for _ in 0..config.max_ranges.saturating_sub(1) {
        let mut bounds = vec![0];
        bounds.extend(cuts.iter().copied());
        bounds.push(n);
        let mut best: Option<(usize, f64)> = None;
        for w in bounds.windows(2) {
            let (lo, hi) = (w[0], w[1]);
            if hi - lo < 2 * MIN_POINTS {
                continue;
            }
            let stretch = &prefix[lo..=hi];
            let whole = prefix[hi].sub(&prefix[lo]).constrained_cost();
            // within the noise floor already: nothing to split
            if whole <= (hi - lo) as f64 * (2.0 * noise).powi(2) {
                continue;
            }
            let Some(split) = best_split(stretch, 2, MIN_POINTS, &[], true) else {
                continue;
            };
            let cut = lo + split[0];
            let cost = prefix[cut].sub(&prefix[lo]).constrained_cost()
                + prefix[hi].sub(&prefix[cut]).constrained_cost();
            if cost * config.split_gain <= whole && best.is_none_or(|(_, g)| whole - cost > g) {
                best = Some((cut, whole - cost));
            }
        }
        let Some((cut, _)) = best else { break };
        let at = cuts.partition_point(|&c| c < cut);
        cuts.insert(at, cut);
    }
}

/// Points a range next to a slope cut holds at least.
const MIN_SLOPE_POINTS: usize = 3;

/// The most slope-cut placements [`place_slope_cuts`] compares (C(23, 4) = 8855 on the OSU grid).
const MAX_PLACEMENTS: usize = 50_000;

/// For every point, whether a slope cut may start a range there: its time lies more than 3
/// noise levels (the median of the step detection's local noise estimates, at least
/// `noise_floor`) above the series' smallest-size level (the median of its first 3 points).
/// Below that the per-byte time is not measurable, so a change of it is not either.
pub(super) fn visible_sizes(lat: &[(u64, f64)], noise_floor: f64) -> Vec<bool> {
    let x: Vec<f64> = lat.iter().map(|p| p.0 as f64).collect();
    let t: Vec<f64> = lat.iter().map(|p| p.1).collect();
    let mut noise = steps::local_noise(&x, &t, noise_floor);
    noise.sort_by(f64::total_cmp);
    let sigma = noise.get(noise.len() / 2).copied().unwrap_or(noise_floor);
    let mut first: Vec<f64> = t.iter().take(3).copied().collect();
    first.sort_by(f64::total_cmp);
    let base = first.get(first.len() / 2).copied().unwrap_or(0.0);
    t.iter().map(|&v| v > base * (1.0 + 3.0 * sigma)).collect()
}

/// The least-absolute-deviation line of every range `q..p` of at least 2 points (`lines[q][p]`),
/// with its sum of absolute relative residuals.
#[allow(clippy::type_complexity)]
fn segment_lines(lat: &[(u64, f64)]) -> Vec<Vec<Option<((f64, f64), f64)>>> {
    let n = lat.len();
    let mut lines = vec![vec![None; n + 1]; n + 1];
    for q in 0..n {
        for p in q + 2..=n {
            let ((a, b), _) = least_absolute(&lat[q..p]);
            let cost = lat[q..p]
                .iter()
                .map(|&(s, t)| ((t - a - b * s.saturating_sub(1) as f64) / t).abs())
                .sum();
            lines[q][p] = Some(((a, b), cost));
        }
    }
    lines
}

/// The sum of the absolute relative residuals of the range lines with `bounds` (a one-point
/// range's line passes through its point).
#[allow(clippy::type_complexity)]
fn placement_cost(lines: &[Vec<Option<((f64, f64), f64)>>], bounds: &[usize]) -> f64 {
    bounds
        .windows(2)
        .map(|w| lines[w[0]][w[1]].map_or(0.0, |(_, c)| c))
        .sum()
}

/// Every way to place `slope` cuts at the `allowed` points `1..n` that are not `steps`, each
/// range next to a slope cut holding at least [`MIN_SLOPE_POINTS`] points; `visit` gets the
/// sorted cuts (slope and step cuts together). Stops early, returning `false`, once `limit`
/// placements were looked at.
fn for_each_placement(
    n: usize,
    slope: usize,
    steps: &[usize],
    allowed: &[bool],
    limit: usize,
    visit: &mut dyn FnMut(&[usize]),
) -> bool {
    struct Walk<'a> {
        n: usize,
        steps: &'a [usize],
        allowed: &'a [bool],
        chosen: Vec<usize>,
        calls: usize,
        limit: usize,
    }
    fn rec(w: &mut Walk<'_>, left: usize, from: usize, visit: &mut dyn FnMut(&[usize])) -> bool {
        if left == 0 {
            let mut cuts: Vec<usize> = w.chosen.iter().chain(w.steps).copied().collect();
            cuts.sort_unstable();
            let mut bounds = vec![0];
            bounds.extend(&cuts);
            bounds.push(w.n);
            let ok = bounds.windows(2).all(|b| {
                let next_to_slope = w.chosen.contains(&b[0]) || w.chosen.contains(&b[1]);
                !next_to_slope || b[1] - b[0] >= MIN_SLOPE_POINTS
            });
            // every placement looked at counts, visited or not
            if w.calls >= w.limit {
                return false;
            }
            w.calls += 1;
            if ok {
                visit(&cuts);
            }
            return true;
        }
        for c in from..w.n {
            if w.steps.contains(&c) || !w.allowed.get(c).copied().unwrap_or(false) {
                continue;
            }
            w.chosen.push(c);
            let more = rec(w, left - 1, c + 1, visit);
            w.chosen.pop();
            if !more {
                return false;
            }
        }
        true
    }
    let mut walk = Walk {
        n,
        steps,
        allowed,
        chosen: Vec::with_capacity(slope),
        calls: 0,
        limit,
    };
    rec(&mut walk, slope, MIN_SLOPE_POINTS, visit)
}

/// Places `slope` cuts besides the fixed `steps` (see [`fit_loggp_from_benchmarks`](super::fit_loggp_from_benchmarks)), on up to
/// 64 points: of all placements (at most [`MAX_PLACEMENTS`]), the one whose constrained
/// least-absolute-deviation range lines have the least sum of absolute relative residuals (the
/// lines' own objective). With `prune = Some(gain)`, a slope cut whose two ranges, merged into
/// one line, would raise their sum by less than the factor `gain` is then dropped (the
/// weakest first, the others placed again). Fewer cuts when no placement of `slope` exists;
/// `None` for more than 64 points or too many placements.
pub(super) fn place_slope_cuts(
    lat: &[(u64, f64)],
    mut slope: usize,
    steps: &[usize],
    allowed: &[bool],
    prune: Option<f64>,
) -> Option<Vec<usize>> {
    let n = lat.len();
    if n > 64 {
        return None;
    }
    let lines = segment_lines(lat);
    let seg_cost = |q: usize, p: usize| lines[q][p].map_or(0.0, |(_, c)| c);
    loop {
        let mut best: Option<(f64, Vec<usize>)> = None;
        let complete = for_each_placement(n, slope, steps, allowed, MAX_PLACEMENTS, &mut |cuts| {
            let mut bounds = Vec::with_capacity(cuts.len() + 2);
            bounds.push(0);
            bounds.extend(cuts);
            bounds.push(n);
            let cost = placement_cost(&lines, &bounds);
            if best.as_ref().is_none_or(|(b, _)| cost < *b) {
                best = Some((cost, cuts.to_vec()));
            }
        });
        if !complete {
            return None;
        }
        // no placement of this many cuts (too few points where a slope change is visible)
        let Some((_, cuts)) = best else {
            if slope == 0 {
                return None;
            }
            slope -= 1;
            continue;
        };
        let Some(gain) = prune else {
            return Some(cuts);
        };
        // the weakest slope cut: the least rise of the cost when its two ranges merge
        let mut bounds = vec![0];
        bounds.extend(&cuts);
        bounds.push(n);
        let weakest = (1..bounds.len() - 1)
            .filter(|&i| !steps.contains(&bounds[i]))
            .map(|i| {
                let (q, c, p) = (bounds[i - 1], bounds[i], bounds[i + 1]);
                seg_cost(q, p) / (seg_cost(q, c) + seg_cost(c, p)).max(f64::MIN_POSITIVE)
            })
            .min_by(f64::total_cmp);
        match weakest {
            Some(ratio) if ratio < gain && slope > 0 => slope -= 1,
            _ => return Some(cuts),
        }
    }
}
