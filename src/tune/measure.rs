//! Measuring the planned runs in rounds and deciding each cell: [`tune`].

use std::time::{Duration, Instant};

use super::TuneConfig;
use super::plan::{Forced, Run, TunePlan};
use super::sign_test::sign_test_p;
use crate::collectives::Collective;
use crate::export::{OmpiBlock, OmpiCollectiveRules, OmpiRule, OmpiRules};

/// Times collective calls on the machine being tuned.
pub trait Runner {
    /// Times each size of `run` once: the mean time of one call, seconds, one value per size in
    /// `run.sizes`' order (OSU's average over ranks, or any consistent statistic). An error (the
    /// run crashed, hung or was killed) marks the run's algorithm failed: it is never chosen.
    ///
    /// # Errors
    ///
    /// What went wrong, in words (recorded in [`TuneReport::failures`]).
    fn time(&mut self, run: &Run) -> Result<Vec<f64>, String>;
}

/// One timed size of one run in one round.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// The run (index into [`TunePlan::runs`]).
    pub run: usize,
    /// The round, from 0.
    pub round: u32,
    /// The message size (rules-file convention).
    pub size: u64,
    /// Seconds per call; `None` where the run failed or gave no positive finite time.
    pub seconds: Option<f64>,
}

/// What a cell's measurements decided.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// A candidate is faster than the default with confidence: the rules file names it.
    Switch {
        /// The algorithm.
        algorithm: Forced,
        /// Median over rounds of its time over the default's.
        median_ratio: f64,
        /// The sign test's p-value (compared with `alpha` over the cell's candidates).
        p_value: f64,
    },
    /// No candidate can pass the test any more (or there is none): the default stays.
    Default,
    /// The budget ran out, or the default's run failed, before the cell was decided: the
    /// default stays.
    Undecided,
}

/// One cell's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct CellResult {
    /// The cell (index into [`TunePlan::cells`]).
    pub cell: usize,
    /// Rounds in which the default was timed.
    pub rounds: u32,
    /// Median measured time of the default, seconds.
    pub default_median: Option<f64>,
    /// The measured-fastest candidate by median ratio to the default, with that ratio.
    pub best: Option<(Forced, f64)>,
    /// The decision.
    pub verdict: Verdict,
}

/// Everything [`tune`] measured and decided.
#[derive(Debug, Clone, PartialEq)]
pub struct TuneReport {
    /// The plan measured.
    pub plan: TunePlan,
    /// Every timed size, in the order measured.
    pub measurements: Vec<Measurement>,
    /// Every failed run: its index, round and the runner's message.
    pub failures: Vec<(usize, u32, String)>,
    /// One result per planned cell, in the plan's order.
    pub cells: Vec<CellResult>,
    /// Runs made.
    pub runs_made: usize,
    /// Time spent measuring.
    pub elapsed: Duration,
    /// Whether the budget stopped the measuring (undecided cells keep the default).
    pub budget_spent: bool,
    /// Whether the measuring stopped because the first [`GIVE_UP_AFTER`] runs all failed (a
    /// launcher or machine that runs nothing); every cell keeps the default.
    pub gave_up: bool,
}

/// [`tune`] stops when this many runs have failed and none has measured a time.
pub const GIVE_UP_AFTER: usize = 2;

/// The median of `v` (the mean of the two middle values for an even count); `None` if empty.
fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// Measures `plan` with `runner` and decides each cell (the [module](super)'s test): one group
/// (collective and communicator size) after the other, those where the model expects the most
/// gain first (the sum over the group's cells of `ln(default's price / cheapest candidate's)`),
/// each in rounds that time the default and every candidate still able to pass once, in an
/// order that alternates between rounds, until the group's cells are decided or `min_rounds +
/// 2` rounds are done; then the groups still open, in the same order, up to
/// `config.max_rounds` rounds. It stops when `budget` is spent (a run is not started
/// when the time its last round took would exceed it; the groups not reached keep the default)
/// or the first [`GIVE_UP_AFTER`] runs all failed. `progress` gets a line per run.
pub fn tune(
    plan: TunePlan,
    runner: &mut dyn Runner,
    config: &TuneConfig,
    budget: Duration,
    progress: &mut dyn FnMut(&str),
) -> TuneReport {
    let start = Instant::now();
    let runs = &plan.runs;
    // per run and size: the time of each round (None: not timed or failed)
    let rounds = config.max_rounds.clamp(1, 64) as usize;
    let mut times: Vec<Vec<Vec<Option<f64>>>> = runs
        .iter()
        .map(|r| vec![vec![None; rounds]; r.sizes.len()])
        .collect();
    let mut failed = vec![false; runs.len()];
    let mut last = vec![Duration::ZERO; runs.len()];
    let mut verdicts: Vec<Option<Verdict>> = plan
        .cells
        .iter()
        .map(|c| c.candidates.is_empty().then_some(Verdict::Default))
        .collect();
    let mut measurements = Vec::new();
    let mut failures = Vec::new();
    let mut runs_made = 0;
    let mut budget_spent = false;
    let mut gave_up = false;
    let mut measured_any = false;
    let cell_of = |run: &Run, size: u64| {
        plan.cells.iter().position(|c| {
            (c.collective, c.processes, c.size) == (run.collective, run.processes, size)
        })
    };
    // groups (collective, communicator size) with their runs, where the model expects the most
    // first: the sum over its cells of ln(default's price / cheapest candidate's)
    let mut groups: Vec<((Collective, u64), Vec<usize>, f64)> = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        let key = (r.collective, r.processes);
        match groups.iter_mut().find(|(k, _, _)| *k == key) {
            Some((_, v, _)) => v.push(i),
            None => groups.push((key, vec![i], 0.0)),
        }
    }
    for (key, _, gain) in &mut groups {
        *gain = plan
            .cells
            .iter()
            .filter(|c| (c.collective, c.processes) == *key)
            .filter_map(|c| {
                let best = c.candidates.first()?.1;
                let g = (c.default_predicted / best).ln();
                g.is_finite().then_some(g.max(0.0))
            })
            .sum();
    }
    groups.sort_by(|a, b| b.2.total_cmp(&a.2));
    // first every group up to `min_rounds + 2` rounds (most cells are decided by then), then
    // the groups still open up to `max_rounds`
    let first_pass = config.min_rounds.saturating_add(2).min(rounds as u32);
    let mut done = vec![0u32; groups.len()];
    'groups: for cap in [first_pass, rounds as u32] {
        for (g, (key, members, _)) in groups.iter().enumerate() {
            while done[g] < cap {
                let round = done[g];
                done[g] += 1;
                let open = |c: usize, verdicts: &[Option<Verdict>]| verdicts[c].is_none();
                let mut order: Vec<usize> = members
                    .iter()
                    .copied()
                    .filter(|&i| {
                        // worth making while one of its cells is open and it is the default there or
                        // a candidate that has not failed and can still pass the test
                        !failed[i]
                            && runs[i].sizes.iter().any(|&s| {
                                cell_of(&runs[i], s).is_some_and(|c| {
                                    open(c, &verdicts)
                                        && runs[i].algorithm.as_ref().is_none_or(|f| {
                                            can_pass(&plan, &times, c, f, round, config)
                                        })
                                })
                            })
                    })
                    .collect();
                if order.is_empty() {
                    done[g] = rounds as u32;
                    break;
                }
                // the order alternates between rounds
                if round % 2 == 1 {
                    order.reverse();
                }
                for i in order {
                    if start.elapsed() + last[i] > budget {
                        budget_spent = true;
                        break 'groups;
                    }
                    let run = &runs[i];
                    let label = run
                        .algorithm
                        .as_ref()
                        .map_or("default", |f| f.name.as_str());
                    progress(&format!(
                        "round {}: {} on {} processes, {label} ({} sizes); {:.0} s left",
                        round + 1,
                        run.collective,
                        run.processes,
                        run.sizes.len(),
                        budget.saturating_sub(start.elapsed()).as_secs_f64()
                    ));
                    let t0 = Instant::now();
                    let result = runner.time(run);
                    last[i] = t0.elapsed();
                    runs_made += 1;
                    let values = match result {
                        Ok(v) if v.len() == run.sizes.len() => v,
                        Ok(v) => {
                            failed[i] = true;
                            failures.push((
                                i,
                                round,
                                format!("{} times for {} sizes", v.len(), run.sizes.len()),
                            ));
                            vec![f64::NAN; run.sizes.len()]
                        }
                        Err(e) => {
                            failed[i] = true;
                            failures.push((i, round, e));
                            vec![f64::NAN; run.sizes.len()]
                        }
                    };
                    if failures.len() >= GIVE_UP_AFTER && !measured_any {
                        // nothing runs here: every further run would fail (and wait for its timeout)
                        gave_up = true;
                        break 'groups;
                    }
                    for (k, (&size, &t)) in run.sizes.iter().zip(&values).enumerate() {
                        let seconds = (t.is_finite() && t > 0.0).then_some(t);
                        measured_any |= seconds.is_some();
                        times[i][k][round as usize] = seconds;
                        measurements.push(Measurement {
                            run: i,
                            round,
                            size,
                            seconds,
                        });
                    }
                }
                // decide what the rounds so far decide
                for (c, verdict) in verdicts.iter_mut().enumerate() {
                    let cell = &plan.cells[c];
                    if verdict.is_none() && (cell.collective, cell.processes) == *key {
                        *verdict = decide(&plan, &times, &failed, c, round + 1, config);
                    }
                }
            }
        }
    }
    // a cell still open when the rounds or the budget ran out keeps the default
    let cells = (0..plan.cells.len())
        .map(|c| {
            let (default_median, best, rounds) = summary(&plan, &times, c);
            CellResult {
                cell: c,
                rounds,
                default_median,
                best,
                verdict: verdicts[c].clone().unwrap_or(Verdict::Undecided),
            }
        })
        .collect();
    TuneReport {
        plan,
        measurements,
        failures,
        cells,
        runs_made,
        elapsed: start.elapsed(),
        budget_spent,
        gave_up,
    }
}

/// The times of cell `c` in the run of `algorithm` (`None`: the default), by round.
fn times_of<'a>(
    plan: &TunePlan,
    times: &'a [Vec<Vec<Option<f64>>>],
    c: usize,
    algorithm: Option<&Forced>,
) -> Option<(usize, &'a [Option<f64>])> {
    let cell = &plan.cells[c];
    plan.runs.iter().enumerate().find_map(|(i, r)| {
        if (r.collective, r.processes) != (cell.collective, cell.processes)
            || r.algorithm.as_ref() != algorithm
        {
            return None;
        }
        let k = r.sizes.iter().position(|&s| s == cell.size)?;
        Some((i, times[i][k].as_slice()))
    })
}

/// Per-round ratios of a candidate's time over the default's, where both were timed.
fn ratios(default: &[Option<f64>], candidate: &[Option<f64>]) -> Vec<f64> {
    default
        .iter()
        .zip(candidate)
        .filter_map(|(d, t)| Some(t.as_ref()? / d.as_ref()?))
        .collect()
}

/// Whether `forced` can still pass the test in cell `c` after `done` rounds: faster than the
/// default in every remaining round would give a p-value within the level.
fn can_pass(
    plan: &TunePlan,
    times: &[Vec<Vec<Option<f64>>>],
    c: usize,
    forced: &Forced,
    done: u32,
    config: &TuneConfig,
) -> bool {
    let cell = &plan.cells[c];
    if !cell.candidates.iter().any(|(f, _)| f == forced) {
        return false;
    }
    let level = config.alpha / cell.candidates.len() as f64;
    let remaining = config.max_rounds.saturating_sub(done);
    let (Some((_, default)), Some((_, t))) = (
        times_of(plan, times, c, None),
        times_of(plan, times, c, Some(forced)),
    ) else {
        return true;
    };
    let r = ratios(default, t);
    let n = r.len() as u32;
    let k = r.iter().filter(|&&x| x < 1.0).count() as u32;
    sign_test_p(n + remaining, k + remaining) <= level
}

/// The verdict on cell `c` after `done` rounds, if the rounds decide it.
fn decide(
    plan: &TunePlan,
    times: &[Vec<Vec<Option<f64>>>],
    failed: &[bool],
    c: usize,
    done: u32,
    config: &TuneConfig,
) -> Option<Verdict> {
    let cell = &plan.cells[c];
    if cell.candidates.is_empty() {
        return Some(Verdict::Default);
    }
    let (di, default) = times_of(plan, times, c, None)?;
    if failed[di] {
        return Some(Verdict::Undecided);
    }
    let level = config.alpha / cell.candidates.len() as f64;
    let remaining = config.max_rounds.saturating_sub(done);
    let mut passing: Option<(f64, f64, usize)> = None;
    let mut possible = false;
    for (j, (forced, _)) in cell.candidates.iter().enumerate() {
        let Some((ci, t)) = times_of(plan, times, c, Some(forced)) else {
            continue;
        };
        if failed[ci] {
            continue;
        }
        let r = ratios(default, t);
        let n = r.len() as u32;
        let k = r.iter().filter(|&&x| x < 1.0).count() as u32;
        let p = sign_test_p(n, k);
        let m = median(r).unwrap_or(f64::INFINITY);
        if n >= config.min_rounds && p <= level && m <= 1.0 - config.min_gain {
            if passing.is_none_or(|(best, _, _)| m < best) {
                passing = Some((m, p, j));
            }
        } else if sign_test_p(n + remaining, k + remaining) <= level {
            possible = true;
        }
    }
    match passing {
        Some((median_ratio, p_value, j)) => Some(Verdict::Switch {
            algorithm: cell.candidates[j].0.clone(),
            median_ratio,
            p_value,
        }),
        None if !possible => Some(Verdict::Default),
        None => None,
    }
}

/// Cell `c`'s default median, its measured-fastest candidate with its median ratio, and the
/// rounds the default was timed in.
fn summary(
    plan: &TunePlan,
    times: &[Vec<Vec<Option<f64>>>],
    c: usize,
) -> (Option<f64>, Option<(Forced, f64)>, u32) {
    let Some((_, default)) = times_of(plan, times, c, None) else {
        return (None, None, 0);
    };
    let rounds = default.iter().flatten().count() as u32;
    let default_median = median(default.iter().flatten().copied().collect());
    let best = plan.cells[c]
        .candidates
        .iter()
        .filter_map(|(f, _)| {
            let (_, t) = times_of(plan, times, c, Some(f))?;
            Some((f.clone(), median(ratios(default, t))?))
        })
        .min_by(|a, b| a.1.total_cmp(&b.1));
    (default_median, best, rounds)
}

impl TuneReport {
    /// The Open MPI rules file of the decisions of a tuning of Open MPI (a tuning of MPICH
    /// writes [`mpich_json`](Self::mpich_json)): per collective and communicator size a block,
    /// per measured size a rule from that size on (the first from 0) naming the switched-to
    /// algorithm, or algorithm 0 (Open MPI's own decision) where the default stays; equal
    /// neighbouring rules merge, and a block equal to the previous one is left out.
    pub fn rules(&self) -> OmpiRules {
        let mut collectives: Vec<OmpiCollectiveRules> = Vec::new();
        for (result, cell) in self.cells.iter().zip(&self.plan.cells) {
            let rule = match &result.verdict {
                Verdict::Switch { algorithm, .. } => OmpiRule {
                    size: cell.size,
                    algorithm: algorithm.id,
                    faninout: algorithm.faninout,
                    segment: algorithm.segment,
                    label: format!("{} (measured)", algorithm.name),
                },
                _ => OmpiRule {
                    size: cell.size,
                    algorithm: 0,
                    faninout: 0,
                    segment: 0,
                    label: "default".into(),
                },
            };
            if collectives
                .last()
                .is_none_or(|c| c.collective != cell.collective)
            {
                collectives.push(OmpiCollectiveRules {
                    collective: cell.collective,
                    blocks: Vec::new(),
                });
            }
            let Some(c) = collectives.last_mut() else {
                continue;
            };
            if c.blocks
                .last()
                .is_none_or(|b| b.processes != cell.processes)
            {
                c.blocks.push(OmpiBlock {
                    processes: cell.processes,
                    rules: Vec::new(),
                });
            }
            let Some(block) = c.blocks.last_mut() else {
                continue;
            };
            let same = block.rules.last().is_some_and(|r| {
                (r.algorithm, r.faninout, r.segment)
                    == (rule.algorithm, rule.faninout, rule.segment)
            });
            if !same {
                let size = if block.rules.is_empty() { 0 } else { rule.size };
                block.rules.push(OmpiRule { size, ..rule });
            }
        }
        for c in &mut collectives {
            c.blocks.dedup_by(|b, a| a.rules == b.rules);
        }
        OmpiRules { collectives }
    }

    /// Every measurement as CSV: `collective,processes,algorithm,id,segment,faninout,round,size,seconds`
    /// (`default` and id 0 for Open MPI's own decision; an empty `seconds` where the run
    /// failed).
    pub fn csv(&self) -> String {
        let mut out =
            String::from("collective,processes,algorithm,id,segment,faninout,round,size,seconds\n");
        for m in &self.measurements {
            let run = &self.plan.runs[m.run];
            let (name, id, segment, faninout) =
                run.algorithm.as_ref().map_or(("default", 0, 0, 0), |f| {
                    (f.name.as_str(), f.id, f.segment, f.faninout)
                });
            out.push_str(&format!(
                "{},{},\"{name}\",{id},{segment},{faninout},{},{},{}\n",
                run.collective,
                run.processes,
                m.round,
                m.size,
                m.seconds.map_or(String::new(), |s| format!("{s:e}"))
            ));
        }
        out
    }
}
