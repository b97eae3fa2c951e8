//! Model-guided tuning (`commcost::tune`) against simulated machines whose truth is known: a
//! candidate that is faster is found with the sign test, a default that is fastest is kept
//! after few rounds, failing algorithms are never chosen, a spent budget leaves a valid file.

use std::time::Duration;

use commcost::collectives::Collective;
use commcost::export::OmpiRules;
use commcost::presets;
use commcost::tune::{Run, Runner, TuneConfig, TuneError, Verdict, plan_tuning, tune};

/// A machine whose calls take the model's time times a factor per algorithm, with seeded
/// multiplicative noise of ±`noise`.
/// The default's time of size `k` of a run.
type DefaultTime = Box<dyn Fn(&Run, usize) -> f64>;

struct Machine {
    factor: Box<dyn Fn(&Run) -> f64>,
    /// The default's time per size where given (else its price times the factor).
    default: Option<DefaultTime>,
    noise: f64,
    state: u64,
    calls: usize,
}

impl Machine {
    fn new(noise: f64, factor: impl Fn(&Run) -> f64 + 'static) -> Self {
        Self {
            factor: Box::new(factor),
            default: None,
            noise,
            state: 0x9e37_79b9_7f4a_7c15,
            calls: 0,
        }
    }
    fn with_default(mut self, default: impl Fn(&Run, usize) -> f64 + 'static) -> Self {
        self.default = Some(Box::new(default));
        self
    }
    fn uniform(&mut self) -> f64 {
        // xorshift64*
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        (self.state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }
}

impl Runner for Machine {
    fn time(&mut self, run: &Run) -> Result<Vec<f64>, String> {
        self.calls += 1;
        let f = (self.factor)(run);
        if f.is_nan() {
            return Err("killed after its timeout".into());
        }
        let mut out = Vec::new();
        for (k, &t) in run.predicted.iter().enumerate() {
            let jitter = 1.0 + self.noise * (2.0 * self.uniform() - 1.0);
            let t = match (&self.default, &run.algorithm) {
                (Some(d), None) => d(run, k),
                _ => t * f,
            };
            out.push(t * jitter);
        }
        Ok(out)
    }
}

/// A rules file's numbers (its labels are comments).
fn numbers(rules: &OmpiRules) -> Vec<(Collective, u64, u64, u32, u64, u64)> {
    let mut out = Vec::new();
    for c in &rules.collectives {
        for b in &c.blocks {
            for r in &b.rules {
                out.push((
                    c.collective,
                    b.processes,
                    r.size,
                    r.algorithm,
                    r.faninout,
                    r.segment,
                ));
            }
        }
    }
    out
}

fn config() -> TuneConfig {
    TuneConfig::new(
        vec![Collective::Bcast, Collective::Allreduce],
        vec![4, 8],
        vec![8, 4096, 65536, 1 << 20],
    )
}

const MINUTE: Duration = Duration::from_secs(60);

#[test]
fn a_faster_candidate_is_found_and_written() {
    let model = presets::mpich2_tcp();
    let config = config();
    let plan = plan_tuning(&model, &config).unwrap();
    // the default runs 30 % slower than the model's price of the fixed decision's algorithm;
    // every forced algorithm takes its price; noise ±5 %
    let mut machine = Machine::new(0.05, |r| if r.algorithm.is_none() { 1.3 } else { 1.0 });
    let report = tune(plan, &mut machine, &config, MINUTE, &mut |_| {});
    let rules = report.rules();
    let mut switched = 0;
    for (result, cell) in report.cells.iter().zip(&report.plan.cells) {
        // a candidate predicted at most 1 / 1.3 of the default's price is truly faster by more
        // than the noise: it must be found; the rules name the algorithm decided
        let truly_faster = cell.candidates[0].1 < cell.default_predicted / 1.3 * 0.9;
        if truly_faster {
            assert!(
                matches!(result.verdict, Verdict::Switch { .. }),
                "{cell:?}: {:?}",
                result.verdict
            );
        }
        if let Verdict::Switch {
            algorithm,
            median_ratio,
            p_value,
        } = &result.verdict
        {
            switched += 1;
            assert!(*median_ratio <= 0.97 && *p_value <= 0.05, "{result:?}");
            let rule = rules
                .lookup(cell.collective, cell.processes, cell.size)
                .unwrap();
            assert_eq!(
                (rule.algorithm, rule.segment),
                (algorithm.id, algorithm.segment)
            );
            // at least min_rounds paired rounds
            assert!(result.rounds >= config.min_rounds);
        }
    }
    assert!(switched > 0);
    // the file reads back as Open MPI reads it
    assert_eq!(
        numbers(&rules.to_string().parse().unwrap()),
        numbers(&rules)
    );
    // one CSV line per measurement
    assert_eq!(report.csv().lines().count(), report.measurements.len() + 1);
}

#[test]
fn a_fastest_default_is_kept_after_few_rounds() {
    let model = presets::mpich2_tcp();
    let config = config();
    let plan = plan_tuning(&model, &config).unwrap();
    let exhaustive: usize =
        plan.cells.iter().map(|c| c.priced + 1).sum::<usize>() * config.max_rounds as usize;
    // every forced algorithm 20 % slower than the default: the default takes 1 / 1.2 of the
    // cheapest candidate's price, every candidate its own price or more
    let cheapest: Vec<((Collective, u64, u64), f64)> = plan
        .cells
        .iter()
        .filter_map(|c| Some(((c.collective, c.processes, c.size), c.candidates.first()?.1)))
        .collect();
    let mut machine = Machine::new(0.05, |_| 1.0).with_default(move |run, k| {
        let key = (run.collective, run.processes, run.sizes[k]);
        cheapest
            .iter()
            .find(|(c, _)| *c == key)
            .map_or(1.0, |(_, t)| t / 1.2)
    });
    let report = tune(plan, &mut machine, &config, MINUTE, &mut |_| {});
    assert!(
        report.cells.iter().all(|c| c.verdict == Verdict::Default),
        "{:?}",
        report.cells
    );
    assert!(
        report.rules().collectives.iter().all(|c| c
            .blocks
            .iter()
            .all(|b| b.rules.iter().all(|r| r.algorithm == 0))),
        "only defaults"
    );
    // decided long before max_rounds: a sign test that cannot pass any more stops a cell
    let timed_sizes = report.measurements.len();
    assert!(
        timed_sizes * 5 < exhaustive,
        "{timed_sizes} sizes timed, an exhaustive sweep {exhaustive}"
    );
    assert!(!report.budget_spent);
}

#[test]
fn failing_algorithms_are_never_chosen() {
    let model = presets::mpich2_tcp();
    let config = config();
    let plan = plan_tuning(&model, &config).unwrap();
    // the model's favourite (the first candidate of the first cell) crashes, and would be fast
    let doomed = plan.cells[0].candidates[0].0.clone();
    let d = doomed.clone();
    let mut machine = Machine::new(0.02, move |r| match &r.algorithm {
        Some(f) if *f == d => f64::NAN,
        None => 1.5,
        Some(_) => 1.0,
    });
    let report = tune(plan, &mut machine, &config, MINUTE, &mut |_| {});
    assert!(!report.failures.is_empty());
    for result in &report.cells {
        if let Verdict::Switch { algorithm, .. } = &result.verdict {
            assert_ne!(*algorithm, doomed);
        }
    }
    // a failing default leaves its cells undecided (the default stays)
    let plan = plan_tuning(&model, &config).unwrap();
    let mut machine = Machine::new(0.0, |r| if r.algorithm.is_none() { f64::NAN } else { 1.0 });
    let report = tune(plan, &mut machine, &config, MINUTE, &mut |_| {});
    assert!(
        report
            .cells
            .iter()
            .zip(&report.plan.cells)
            .all(|(r, c)| c.candidates.is_empty() || r.verdict == Verdict::Undecided)
    );
}

#[test]
fn a_spent_budget_still_writes_a_valid_file() {
    let model = presets::mpich2_tcp();
    let config = config();
    let plan = plan_tuning(&model, &config).unwrap();
    let mut machine = Machine::new(0.0, |_| 1.0);
    let report = tune(plan, &mut machine, &config, Duration::ZERO, &mut |_| {});
    assert_eq!((machine.calls, report.runs_made), (0, 0));
    assert!(report.budget_spent);
    let rules = report.rules();
    assert_eq!(
        numbers(&rules.to_string().parse().unwrap()),
        numbers(&rules)
    );
    assert!(
        rules
            .lookup(Collective::Bcast, 4, 8)
            .is_some_and(|r| r.algorithm == 0)
    );
}

#[test]
fn bad_configurations_name_the_field() {
    let model = presets::mpich2_tcp();
    let cases: Vec<(TuneConfig, &str)> = vec![
        (TuneConfig::new(vec![], vec![4], vec![8]), "collectives"),
        (
            TuneConfig::new(vec![Collective::Scan], vec![4], vec![8]),
            "collectives",
        ),
        (
            TuneConfig::new(vec![Collective::Bcast, Collective::Bcast], vec![4], vec![8]),
            "collectives",
        ),
        (
            TuneConfig::new(vec![Collective::Bcast], vec![1, 4], vec![8]),
            "processes",
        ),
        (
            TuneConfig::new(vec![Collective::Bcast], vec![8, 4], vec![8]),
            "processes",
        ),
        (
            TuneConfig::new(vec![Collective::Bcast], vec![4], vec![]),
            "sizes",
        ),
        (
            TuneConfig::new(vec![Collective::Bcast], vec![4], (0..200_000).collect()),
            "sizes",
        ),
        (
            TuneConfig {
                margin: f64::NAN,
                ..TuneConfig::new(vec![Collective::Bcast], vec![4], vec![8])
            },
            "margin",
        ),
        (
            TuneConfig {
                min_rounds: 9,
                max_rounds: 3,
                ..TuneConfig::new(vec![Collective::Bcast], vec![4], vec![8])
            },
            "rounds",
        ),
        (
            TuneConfig {
                alpha: 1.0,
                ..TuneConfig::new(vec![Collective::Bcast], vec![4], vec![8])
            },
            "alpha",
        ),
    ];
    for (config, field) in cases {
        let e = plan_tuning(&model, &config).unwrap_err();
        assert!(
            matches!(&e, TuneError::Config { field: f, .. } if *f == field),
            "{field}: {e}"
        );
    }
}

/// Between two measured sizes whose algorithms differ, the filled rules switch at the first
/// power of two where the second algorithm's price, times its measured / predicted ratio, is at
/// most the first's; the plain rules switch at the second measured size.
#[test]
fn switches_between_measured_sizes_follow_the_corrected_model() {
    use commcost::Message;
    use commcost::collectives::{Family, Problem, cost_in};
    let model = presets::mpich2_tcp();
    // one candidate per cell: the model's pick, whatever it measures
    let config = TuneConfig {
        max_candidates: 1,
        ..TuneConfig::new(vec![Collective::Bcast], vec![8], vec![8, 1 << 20])
    };
    let price = |name: &str, bytes: u64| {
        cost_in(
            &model,
            Family::Ompi,
            Collective::Bcast,
            name,
            &Problem::new(8, Message::contiguous(bytes)),
        )
        .unwrap()
        .cost
    };
    // the factor of the model's pick at 1 MiB: 1 (as priced), then 1.6
    let mut boundaries = Vec::new();
    for slow in [1.0, 1.6] {
        let plan = plan_tuning(&model, &config).unwrap();
        let large = plan.cells[1].candidates[0].0.clone();
        let big = large.clone();
        // the default is 3x its price: both cells switch, to the model's pick
        let mut machine = Machine::new(0.0, move |r| match &r.algorithm {
            None => 3.0,
            Some(f) if *f == big => slow,
            Some(_) => 1.0,
        });
        let report = tune(plan, &mut machine, &config, MINUTE, &mut |_| {});
        // what each cell switched to (the measured-fastest passing candidate) and its
        // measured / predicted ratio, the machine's factor
        let switched: Vec<_> = report
            .cells
            .iter()
            .map(|result| match &result.verdict {
                Verdict::Switch { algorithm, .. } => algorithm.clone(),
                other => panic!("{other:?}"),
            })
            .collect();
        let (a, b) = (&switched[0], &switched[1]);
        assert_ne!(a, b, "the test needs two different decisions");
        let factor = |f: &commcost::tune::Forced| if *f == large { slow } else { 1.0 };
        let plain = report.rules();
        let filled = report.rules_filled(&model, &config).unwrap();
        let at = |rules: &OmpiRules, bytes: u64| {
            rules.lookup(Collective::Bcast, 8, bytes).unwrap().algorithm
        };
        assert_eq!(at(&plain, (1 << 20) - 1), a.id);
        assert_eq!(at(&filled, 8), a.id);
        assert_eq!(at(&filled, 1 << 20), b.id);
        // the first power of two where the second decision's measured time (its price times
        // its factor) is at most the first's
        let x = (4..20)
            .map(|k| 1u64 << k)
            .find(|&x| factor(b) * price(&b.name, x) <= factor(a) * price(&a.name, x))
            .unwrap_or(1 << 20);
        assert_eq!(at(&filled, x), b.id, "slow {slow}: switch at {x}");
        assert_eq!(at(&filled, x - 1), a.id, "slow {slow}: not before {x}");
        boundaries.push(x);
    }
    // a slower measured algorithm moves its switch to larger sizes
    assert!(boundaries[1] > boundaries[0], "{boundaries:?}");
}

/// A machine where nothing runs (a launcher that cannot start, unreachable hosts): the tuning
/// stops after the first two failed runs instead of waiting for every run's timeout, and the
/// rules keep Open MPI's default everywhere.
#[test]
fn a_machine_that_runs_nothing_is_given_up_on_at_once() {
    let model = presets::mpich2_tcp();
    let config = config();
    let plan = plan_tuning(&model, &config).unwrap();
    let planned = plan.runs.len();
    let mut machine = Machine::new(0.0, |_| f64::NAN);
    let report = tune(plan, &mut machine, &config, MINUTE, &mut |_| {});
    assert!(planned > 2);
    assert_eq!(machine.calls, commcost::tune::GIVE_UP_AFTER);
    assert!(report.gave_up && !report.budget_spent);
    assert!(report.measurements.iter().all(|m| m.seconds.is_none()));
    for c in &report.rules().collectives {
        for b in &c.blocks {
            assert!(b.rules.iter().all(|r| r.algorithm == 0), "{c:?}");
        }
    }
    // a machine where only the first run fails goes on
    let plan = plan_tuning(&model, &config).unwrap();
    let first = std::cell::Cell::new(true);
    let mut machine = Machine::new(
        0.0,
        move |_| if first.replace(false) { f64::NAN } else { 1.0 },
    );
    let report = tune(plan, &mut machine, &config, MINUTE, &mut |_| {});
    assert!(!report.gave_up && report.runs_made > planned);
}

/// Groups (collective, communicator size) are measured one after the other, those where the
/// model expects the largest gain over the default first, so that a budget too small for all
/// decides the most promising ones; cells needing many rounds wait for a second pass.
#[test]
fn the_most_promising_groups_are_measured_first() {
    let model = presets::mpich2_tcp();
    let config = config();
    let plan = plan_tuning(&model, &config).unwrap();
    // the expected gain of each group: sum of ln(default's price / cheapest candidate's)
    let mut gains: Vec<((Collective, u64), f64)> = Vec::new();
    for cell in &plan.cells {
        let g = cell
            .candidates
            .first()
            .map_or(0.0, |(_, t)| (cell.default_predicted / t).ln().max(0.0));
        let key = (cell.collective, cell.processes);
        match gains.iter_mut().find(|(k, _)| *k == key) {
            Some((_, s)) => *s += g,
            None => gains.push((key, g)),
        }
    }
    let best = gains.iter().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap().0;
    let mut machine = Machine::new(0.05, |r| if r.algorithm.is_none() { 1.3 } else { 1.0 });
    let report = tune(plan, &mut machine, &config, MINUTE, &mut |_| {});
    let group = |m: &commcost::tune::Measurement| {
        let r = &report.plan.runs[m.run];
        (r.collective, r.processes)
    };
    assert_eq!(group(&report.measurements[0]), best);
    // groups are reached in the order of their expected gain, and the first pass of each
    // (up to min_rounds + 2 rounds) is finished before the next group starts
    let mut seen: Vec<(Collective, u64)> = Vec::new();
    for m in &report.measurements {
        let g = group(m);
        if !seen.contains(&g) {
            seen.push(g);
        }
        if seen.len() < gains.len() {
            assert_eq!(
                Some(&g),
                seen.last(),
                "{g:?} measured again before every group was"
            );
            assert!(m.round < config.min_rounds + 2, "{m:?}");
        }
    }
    let mut by_gain = gains.clone();
    by_gain.sort_by(|a, b| b.1.total_cmp(&a.1));
    assert_eq!(seen, by_gain.iter().map(|(k, _)| *k).collect::<Vec<_>>());
}

/// Planned on a platform (`TuneConfig::simulation`), every candidate's and the default's
/// predicted time is the simulator's price of that algorithm, not its closed form.
#[test]
fn planning_on_a_platform_prices_with_the_simulator() {
    use commcost::Message;
    use commcost::collectives::{Family, Problem, cost_in};
    use commcost::sim::{SimLimits, SimOptions, cost_simulated_in};
    let model = presets::mpich2_tcp();
    let options = SimOptions {
        link_burst: Some(9000),
        cores: Some(2),
        ..SimOptions::default()
    };
    // sizes whose schedules are small (a debug build simulates 1 MiB in 1 KiB segments slowly)
    let config = TuneConfig {
        simulation: Some(options),
        ..TuneConfig::new(
            vec![Collective::Bcast, Collective::Allreduce],
            vec![4, 8],
            vec![8, 4096, 65536],
        )
    };
    let plan = plan_tuning(&model, &config).unwrap();
    let mut differs = 0;
    for cell in &plan.cells {
        let problem = Problem::new(cell.processes, Message::contiguous(cell.bytes));
        for (f, t) in &cell.candidates {
            let simulated = cost_simulated_in(
                &model,
                Family::Ompi,
                cell.collective,
                &f.name,
                &problem,
                SimLimits::default(),
                &options,
            )
            .unwrap()
            .cost;
            assert!(
                (*t - simulated).abs() <= 1e-12 * simulated,
                "{cell:?}: {t} {simulated}"
            );
            let closed = cost_in(&model, Family::Ompi, cell.collective, &f.name, &problem)
                .unwrap()
                .cost;
            if (closed - simulated).abs() > 1e-9 * closed {
                differs += 1;
            }
        }
    }
    assert!(differs > 0, "the platform changes some prices");
}

/// On nodes (`TuneConfig::nodes`) the plan prices every cell's default and candidates as
/// `cost_on_nodes_in` does on the same platform, and a layout that cannot place a
/// communicator size is a configuration error naming `nodes`.
#[test]
fn a_plan_on_nodes_prices_the_two_level_platform() {
    use commcost::Message;
    use commcost::collectives::{Family, Problem};
    use commcost::sim::{NodeLayout, Placement, SimLimits, SimOptions, TwoLevel, cost_on_nodes_in};
    use commcost::tune::TuneNodes;
    use std::sync::Arc;

    let shm = commcost::LogGP::new(0.3e-6, 0.3e-6, 0.2e-6, 0.1e-9).unwrap();
    let net = Arc::new(commcost::LogGP::new(20e-6, 3e-6, 8e-6, 8e-9).unwrap());
    let layout = NodeLayout::Uniform {
        ranks_per_node: 2,
        placement: Placement::Block,
    };
    let config = TuneConfig {
        nodes: Some(TuneNodes {
            layout: layout.clone(),
            inter: net.clone(),
            inter_rendezvous_above: None,
        }),
        ..TuneConfig::new(vec![Collective::Allreduce], vec![4, 8], vec![8, 65536])
    };
    let plan = plan_tuning(&shm, &config).unwrap();
    assert_eq!(plan.cells.len(), 4);
    for cell in &plan.cells {
        let map = layout.map_for_communicator(cell.processes).unwrap();
        let platform = TwoLevel {
            nodes: &map,
            inter: net.as_ref(),
            inter_rendezvous_above: None,
        };
        let problem = Problem::new(cell.processes, Message::contiguous(cell.bytes));
        let cost = |name: &str| {
            cost_on_nodes_in(
                &shm,
                platform,
                Family::Ompi,
                Collective::Allreduce,
                name,
                &problem,
                SimLimits::default(),
                &SimOptions::default(),
            )
            .unwrap()
            .cost
        };
        // the same simulation: the same bits
        assert_eq!(
            cell.default_predicted.to_bits(),
            cost(&cell.default_name).to_bits(),
            "{cell:?}"
        );
        for (forced, predicted) in &cell.candidates {
            assert_eq!(
                predicted.to_bits(),
                cost(&forced.name).to_bits(),
                "{cell:?}"
            );
        }
    }
    // 6 ranks do not fill nodes of 4
    let bad = TuneConfig {
        nodes: Some(TuneNodes {
            layout: NodeLayout::Uniform {
                ranks_per_node: 4,
                placement: Placement::Block,
            },
            inter: net,
            inter_rendezvous_above: None,
        }),
        ..TuneConfig::new(vec![Collective::Allreduce], vec![6], vec![8])
    };
    assert!(matches!(
        plan_tuning(&shm, &bad),
        Err(TuneError::Config { field: "nodes", .. })
    ));
}
