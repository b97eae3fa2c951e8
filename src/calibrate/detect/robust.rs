//! The robust detection behind [`detect_changes`](super::detect_changes): the paper's
//! look-ahead rule with relative residuals, outliers, noise floors, prediction intervals, a
//! boundary pass and a merge pass.

use super::window::{Line, Series, Window};
use super::{DetectionConfig, Segment};

/// The noise levels (squared, relative) deviations are judged by: per point the larger of
/// the configured floor and the local robust noise; for the whole series the larger of the
/// floor and the series' robust noise.
struct Floors {
    local: Vec<f64>,
    global: f64,
}

impl Floors {
    fn at(&self, i: usize) -> f64 {
        self.local.get(i).copied().unwrap_or(self.global)
    }

    /// The mean floor over `points`.
    fn mean_over(&self, points: impl Iterator<Item = usize>) -> f64 {
        let (sum, count) = points.fold((0.0, 0usize), |(s, c), i| (s + self.at(i), c + 1));
        if count == 0 { 0.0 } else { sum / count as f64 }
    }
}

pub(super) fn detect_with<W: Window>(
    sizes: &[f64],
    values: &[f64],
    config: &DetectionConfig,
) -> Vec<Segment> {
    let n = values.len();
    if n == 0 {
        return Vec::new();
    }
    let series = Series::new(sizes, values);
    // a look-ahead beyond the series sees nothing; capping it keeps `c + x` from overflowing
    let x = config.lookahead.clamp(1, n);
    // the noise level deviations are judged by is at least the robust noise around the point;
    // the paper's lsq comparison only needs a floor against rounding
    let (global, local) = series.robust_noise();
    let floors = Floors {
        local: local
            .into_iter()
            .map(|noise| noise.max(config.relative_floor).powi(2))
            .collect(),
        global: global.max(config.relative_floor).powi(2),
    };
    let lsq_floor = config.relative_floor * config.relative_floor;
    let warmup = x.max(3);
    let mut segments: Vec<Segment> = Vec::new();
    let mut start = 0;
    while start < n {
        let warm_end = (start + warmup).min(n);
        let (mut points, mut outliers) = warm_up(&series, start, warm_end, config, &floors);
        let mut window = W::start(&series, start, &points);
        let mut c = warm_end - 1;
        let mut changed = false;
        while c + x < n {
            let line = window.sums(&series).line();
            let base = line.lsq.max(lsq_floor);
            let deviates =
                |i: usize| series.standardized(&line, i, floors.at(i)) > config.deviation;
            if (c + 1..=c + x).all(deviates)
                && window.lookahead_exceeds(&series, &line, c + 1..=c + x, config.pfact * base)
            {
                // the first look-ahead points may be ordinary noisy points of this range
                // that the switch right after them makes look like the start of the next
                // one: each stays here while this range's line is closer to it than the line
                // of the points after it
                for _ in 1..x {
                    let rest_end = (c + x).min(n - 1);
                    if rest_end < c + 3 || !closer_to_first(&series, &line, c + 1, c + 2..=rest_end)
                    {
                        break;
                    }
                    window.push(&series, c + 1);
                    points.push(c + 1);
                    c += 1;
                }
                changed = true;
                break;
            }
            if deviates(c + 1) {
                outliers.push(c + 1);
            } else {
                window.push(&series, c + 1);
                points.push(c + 1);
            }
            c += 1;
        }
        if !changed {
            // the tail: too short for a look-ahead; its deviants are outliers
            for i in c + 1..n {
                let line = window.sums(&series).line();
                if series.standardized(&line, i, floors.at(i)) > config.deviation {
                    outliers.push(i);
                } else {
                    window.push(&series, i);
                    points.push(i);
                }
            }
            c = n - 1;
        }
        let line = window.sums(&series).line();
        segments.push(Segment {
            start,
            end: c + 1,
            outliers,
            intercept: line.intercept,
            slope: line.slope,
        });
        start = c + 1;
    }
    let merged = merge(&series, segments, config, &floors);
    refine(&series, merged, config, &floors)
}

/// Whether point `i` is closer (in relative residual) to `current` than to the line fitted to
/// the points `next`.
fn closer_to_first(
    series: &Series<'_>,
    current: &Line,
    i: usize,
    next: std::ops::RangeInclusive<usize>,
) -> bool {
    let following = series.sums_of(*next.start(), next).line();
    series.residual(current, i).abs() < series.residual(&following, i).abs()
}

/// The first points of a range, with at most one outlier removed by leave-one-out: the point
/// whose removal leaves a line it is far from.
fn warm_up(
    series: &Series<'_>,
    start: usize,
    end: usize,
    config: &DetectionConfig,
    floors: &Floors,
) -> (Vec<usize>, Vec<usize>) {
    let all: Vec<usize> = (start..end).collect();
    if all.len() < 4 {
        return (all, Vec::new());
    }
    let mut worst: Option<(usize, f64)> = None;
    for &i in &all {
        let line = series
            .sums_of(start, all.iter().copied().filter(|&j| j != i))
            .line();
        let z = series.standardized(&line, i, floors.at(i));
        if z > 2.0 * config.deviation && worst.is_none_or(|(_, w)| z > w) {
            worst = Some((i, z));
        }
    }
    match worst {
        Some((i, _)) => (all.into_iter().filter(|&j| j != i).collect(), vec![i]),
        None => (all, Vec::new()),
    }
}

/// The weighted sum of squared relative residuals of the line through `points` (0 for fewer
/// than 3), and its residual degrees of freedom.
fn sse_of(series: &Series<'_>, points: &[usize]) -> (f64, usize) {
    match points.first() {
        Some(&origin) if points.len() > 2 => {
            let line = series.sums_of(origin, points.iter().copied()).line();
            (line.lsq * line.dof as f64, line.dof)
        }
        _ => (0.0, 0),
    }
}

/// The boundary pass of [`detect_changes`](super::detect_changes): a switch among the first points of the series
/// (before the look-ahead could see it: at the 3rd, 4th or 5th point) splits the first range
/// when the point after the switch and most of the next `x` are more than `deviation` noise
/// levels off the first line, and the point before the switch is off the next line by more
/// than that and by at least 25 % of its level (a step, not the corner of
/// `max(o, g + (s - 1) G)`); every boundary then moves by up to 2 points to where the two
/// neighbouring lines fit best.
fn refine(
    series: &Series<'_>,
    mut segments: Vec<Segment>,
    config: &DetectionConfig,
    floors: &Floors,
) -> Vec<Segment> {
    let inliers = |s: &Segment, from: usize, to: usize| -> Vec<usize> {
        (from..to).filter(|i| !s.outliers.contains(i)).collect()
    };
    // an early switch: split the first range at the k whose two lines fit best, if the test
    // says two lines are needed and every one of the next `x` points is off the first line
    if let Some(first) = segments.first().cloned() {
        let x = config.lookahead.clamp(1, series.values.len().max(1));
        let last_k = (first.start + x.max(3)).min(first.end.saturating_sub(x.max(3)));
        let mut best: Option<(usize, f64)> = None;
        for k in first.start + 2..=last_k {
            let (a, b) = (
                inliers(&first, first.start, k),
                inliers(&first, k, first.end),
            );
            if a.len() < 2 || b.len() < 3 {
                continue;
            }
            // the series' noise: the local estimates of the first few points see one side
            let sigma = floors.global.sqrt().max(config.relative_floor);
            // the new level: the first point after k is off the first range's level, and so
            // are most of the next `x` points (noise may bring one of them close; one outlier
            // is not a level). Two to four points give no slope worth extrapolating: the first
            // range is judged by its weighted mean level.
            let w: f64 = a.iter().map(|&i| series.weights[i]).sum();
            let level = a
                .iter()
                .map(|&i| series.weights[i] * series.values[i])
                .sum::<f64>()
                / w;
            let mut offs: Vec<f64> = (k..(k + x).min(first.end))
                .map(|i| {
                    let scale = series.scales[i].min(level.abs()).max(f64::MIN_POSITIVE);
                    (series.values[i] - level).abs() / scale / sigma
                })
                .collect();
            let first_off = offs.first().copied().unwrap_or(0.0);
            offs.sort_by(f64::total_cmp);
            let median_off = offs.get(offs.len() / 2).copied().unwrap_or(0.0);
            let new_level = first_off > config.deviation && median_off > config.deviation;
            // a step, not a kink: the next range's line, taken back to the last point of the
            // first range (not an outlier), misses it by more than the noise and by at least a quarter of the level (a
            // max(o, g + (s - 1) G) corner is continuous; so few points give no noise
            // estimate of their own)
            let line_b = series.sums_of(b[0], b.iter().copied()).line();
            let last_a = a[a.len() - 1];
            let back = series.residual(&line_b, last_a).abs();
            let step = back >= 0.25 && back > config.deviation * sigma;
            let total = sse_of(series, &a).0 + sse_of(series, &b).0;
            if new_level && step && best.is_none_or(|(_, t)| total < t) {
                best = Some((k, total));
            }
        }
        if let Some((k, _)) = best {
            let tail = Segment {
                start: k,
                outliers: first.outliers.iter().copied().filter(|&i| i >= k).collect(),
                ..first.clone()
            };
            let head = Segment {
                end: k,
                outliers: first.outliers.iter().copied().filter(|&i| i < k).collect(),
                ..first
            };
            segments.splice(0..1, [head, tail]);
        }
    }
    // boundaries: move each by up to 2 points to the best fit of its two lines
    for j in 1..segments.len() {
        let (a, b) = (segments[j - 1].clone(), segments[j].clone());
        // the first range may keep only 2 points (a switch at the 3rd size)
        let least = if j == 1 { 2 } else { 3 };
        let lo = b.start.saturating_sub(2).max(a.start + least);
        let hi = (b.start + 2).min(b.end.saturating_sub(3));
        // points near the boundary count, even where a range took them for outliers: the
        // first point of a new level looks like an outlier of the old one
        let merged = Segment {
            start: a.start,
            end: b.end,
            outliers: a
                .outliers
                .iter()
                .chain(&b.outliers)
                .copied()
                .filter(|&i| i + 2 < lo || i > hi + 2)
                .collect(),
            intercept: 0.0,
            slope: 0.0,
        };
        let mut best = (b.start, f64::INFINITY);
        for k in lo..=hi {
            let left = inliers(&merged, a.start, k);
            let right = inliers(&merged, k, b.end);
            let total = sse_of(series, &left).0 + sse_of(series, &right).0;
            // ties keep the detected boundary
            if total < best.1 * (1.0 - 1e-9) || (k == b.start && total <= best.1) {
                best = (k, total);
            }
        }
        let k = best.0;
        if k != b.start && best.1.is_finite() {
            segments[j - 1].end = k;
            segments[j - 1].outliers = merged
                .outliers
                .iter()
                .copied()
                .filter(|&i| i >= a.start && i < k)
                .collect();
            segments[j].start = k;
            segments[j].outliers = merged
                .outliers
                .iter()
                .copied()
                .filter(|&i| i >= k && i < b.end)
                .collect();
        }
    }
    for s in &mut segments {
        let points: Vec<usize> = s.inliers().collect();
        if let Some(&origin) = points.first() {
            let line = series.sums_of(origin, points.iter().copied()).line();
            s.intercept = line.intercept;
            s.slope = line.slope;
        }
    }
    segments
}

/// The merge pass of [`detect_changes`](super::detect_changes).
fn merge(
    series: &Series<'_>,
    mut segments: Vec<Segment>,
    config: &DetectionConfig,
    floors: &Floors,
) -> Vec<Segment> {
    let line_of = |parts: &[&Segment]| {
        let origin = parts[0].start;
        series
            .sums_of(origin, parts.iter().flat_map(|s| s.inliers()))
            .line()
    };
    // Two ranges lie on one line when the joint fit adds no more deviation than noise
    // explains: Chow's test, `F = ((SSE_joint - SSE_a - SSE_b) / 2) / (pooled noise)` against
    // the 99.9 % quantile of `F(2, d)`, `d` the pooled degrees of freedom. That quantile has the
    // closed form `(d / 2) ((1 - p)^(-2 / d) - 1)`; it is large for ranges of few points, whose
    // own fits can be far tighter than the noise.
    let consistent = |parts: &[&Segment]| {
        let joint = line_of(parts);
        let (mut sse, mut dof) = (0.0, 0usize);
        for s in parts {
            let own = line_of(&[s]);
            sse += own.lsq * own.dof as f64;
            dof += own.dof;
        }
        let floor = floors.mean_over(parts.iter().flat_map(|s| s.inliers()));
        let noise = if dof == 0 {
            floor
        } else {
            (sse / dof as f64).max(floor)
        };
        let extra = (joint.lsq * joint.dof as f64 - sse).max(0.0) / 2.0;
        let d = dof.max(1) as f64;
        let quantile = d / 2.0 * (1e-3f64.powf(-2.0 / d) - 1.0);
        extra <= quantile * noise
    };
    // replaces segments[first..=last] by one range over them; the points of `transient`
    // (a level shift between them) become outliers
    let join =
        |segments: &mut Vec<Segment>, first: usize, last: usize, transient: Option<usize>| {
            let mut outliers = Vec::new();
            for (k, s) in segments[first..=last].iter().enumerate() {
                if Some(first + k) == transient {
                    outliers.extend(s.start..s.end);
                } else {
                    outliers.extend(s.outliers.iter().copied());
                }
            }
            let joined = Segment {
                start: segments[first].start,
                end: segments[last].end,
                outliers,
                intercept: 0.0,
                slope: 0.0,
            };
            let line = line_of(&[&joined]);
            segments.splice(
                first..=last,
                [Segment {
                    intercept: line.intercept,
                    slope: line.slope,
                    ..joined
                }],
            );
        };
    let short = config
        .lookahead
        .clamp(1, series.values.len().max(1))
        .saturating_mul(4);
    loop {
        // first a short transient between two ranges on one line, then neighbours on one line
        let transient = (1..segments.len().saturating_sub(1)).find(|&k| {
            let (a, b, c) = (&segments[k - 1], &segments[k], &segments[k + 1]);
            b.end - b.start < short && consistent(&[a, c])
        });
        if let Some(k) = transient {
            join(&mut segments, k - 1, k + 1, Some(k));
            continue;
        }
        let neighbours =
            (1..segments.len()).find(|&k| consistent(&[&segments[k - 1], &segments[k]]));
        match neighbours {
            Some(k) => join(&mut segments, k - 1, k, None),
            None => return segments,
        }
    }
}
