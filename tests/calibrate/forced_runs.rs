//! Per-call costs of Open MPI's algorithms fitted to real forced runs
//! (`tests/fixtures/collectives/ompi_runs.csv`: Open MPI 4.1.4 over shared memory, every
//! algorithm forced, 2, 4 and 8 processes; how it was made: that directory's NOTE.md), priced
//! by the model of docs/ACCURACY.md's selection measurements on the same machine
//! (`tests/fixtures/selection/vader-model-local.json`: LogGP with four ranges from OSU runs,
//! and the local work `calibrate local` measured). The fit sees only 2-process runs of at most
//! 512 B; the checks are on the runs it did not see. The numbers are those of docs/ACCURACY.md.

use commcost::ModelSpec;
use commcost::calibrate::{CallCostPlan, ForcedStat, fit_call_costs, parse_forced_runs};
use commcost::collectives::Collective;
use commcost::collectives::{LocalWork, Operator};

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/fixtures/collectives/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn vader() -> (ModelSpec, LocalWork, Operator) {
    let path = format!(
        "{}/tests/fixtures/selection/vader-model-local.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    (
        serde_json::from_value(file["spec"].clone()).unwrap(),
        serde_json::from_value(file["local"]["work"].clone()).unwrap(),
        serde_json::from_value(file["local"]["operator"].clone()).unwrap(),
    )
}

/// The call costs fitted on `forced_runs_p2.csv` (taken by `calibrate collectives --measure`).
fn fitted_on_the_harness_run(
    spec: &ModelSpec,
    local: LocalWork,
    operator: Operator,
) -> commcost::calibrate::CallCostFit {
    let fresh = parse_forced_runs(&fixture("forced_runs_p2.csv"), ForcedStat::Median).unwrap();
    fit_call_costs(
        &fresh,
        spec.as_model(),
        operator,
        local,
        &CallCostPlan::default(),
    )
    .unwrap()
}

#[test]
fn call_costs_make_the_two_process_picks_match_the_measured_best() {
    let runs = parse_forced_runs(&fixture("ompi_runs.csv"), ForcedStat::Median).unwrap();
    // 9 collectives' forced runs (defaults and reduce_scatter_block's recursive doubling
    // skipped): the file has 1 781 rows
    assert!(runs.len() > 1500, "{}", runs.len());
    let (spec, local, operator) = vader();
    let fit = fit_call_costs(
        &runs,
        spec.as_model(),
        operator,
        local,
        &CallCostPlan::default(),
    )
    .unwrap();
    // every algorithm measured at 2 processes gets a cost (48 of Open MPI's ids; the
    // two_proc ones included, reduce_scatter_block's 2 has no counterpart)
    assert_eq!(fit.fitted.len(), 48);
    let (_, p2) = fit
        .held_out_by_processes
        .iter()
        .find(|(p, _)| *p == 2)
        .unwrap();
    // held out at 2 processes: sizes from 2 KiB up, 39 cells of two or more algorithms
    assert_eq!(p2.cells, 39);
    // the model's pick within 10 % of the fastest forced algorithm: 21 of 39 cells without
    // call costs, 31 with them
    assert_eq!(
        (p2.picks_within_10pct_without, p2.picks_within_10pct_with),
        (21, 31),
        "{p2:?}"
    );
    // the costs are sub-microsecond to a few microseconds, as the 8 B runs differ
    for f in &fit.fitted {
        assert!(f.seconds < 5e-6, "{f:?}");
    }
    // binomial bcast is measured at 8 B as taking about 0.3 µs more than the model prices
    let binomial = fit.calls.get(Collective::Bcast, 6);
    assert!(binomial > 0.1e-6 && binomial < 1e-6, "{binomial}");
}

/// The costs fitted on one run (`forced_runs_p2.csv`, taken by `calibrate collectives
/// --measure`) checked on another (`ompi_runs.csv`, taken earlier by the sweep script): the
/// picks improve at every process count, most at 8.
#[test]
fn call_costs_fitted_on_one_run_improve_the_picks_of_another() {
    use commcost::calibrate::check_call_costs;
    let (spec, local, operator) = vader();
    let fit = fitted_on_the_harness_run(&spec, local, operator);
    // held out in the same run (4 KiB ... 256 KiB): 14 -> 20 of 25 cells
    let same = fit.held_out.unwrap();
    assert_eq!(
        (
            same.cells,
            same.picks_within_10pct_without,
            same.picks_within_10pct_with
        ),
        (25, 14, 20)
    );
    let other = parse_forced_runs(&fixture("ompi_runs.csv"), ForcedStat::Median).unwrap();
    let check = check_call_costs(
        &other,
        spec.as_model(),
        operator,
        local.with_calls(fit.calls),
    )
    .unwrap()
    .unwrap();
    let picks: Vec<(u64, usize, usize, usize)> = check
        .by_processes
        .iter()
        .map(|(p, e)| {
            (
                *p,
                e.cells,
                e.picks_within_10pct_without,
                e.picks_within_10pct_with,
            )
        })
        .collect();
    assert_eq!(picks, [(2, 71, 37, 41), (4, 71, 34, 36), (8, 71, 18, 33)]);
    // the median errors docs/ACCURACY.md states, without -> with the call costs (percent)
    let pct = |x: f64| (100.0 * x).round() as u32;
    let medians: Vec<(u64, u32, u32)> = check
        .by_processes
        .iter()
        .map(|(p, e)| (*p, pct(e.median_without), pct(e.median_with)))
        .collect();
    assert_eq!(medians, [(2, 56, 52), (4, 87, 87), (8, 92, 92)]);
}

/// OSU's forced runs in a selection sweep's CSV (`tests/fixtures/selection/vader-p2.csv`, made
/// by `scripts/selection_sweep.sh`; its NOTE.md) are read directly: 915 rows with `forced:` in
/// `config` (`awk -F, 'NR > 1 && $4 ~ /^forced:/' vader-p2.csv | wc -l`). The costs fitted on
/// the harness's run `forced_runs_p2.csv` move the model's picks among them from 113 to 136 of
/// 163 cells, as docs/ACCURACY.md reports.
#[test]
fn call_costs_fitted_on_the_harness_improve_the_picks_among_osus_forced_runs() {
    use commcost::calibrate::check_call_costs;
    let (spec, local, operator) = vader();
    let fit = fitted_on_the_harness_run(&spec, local, operator);
    let sweep = std::fs::read_to_string(format!(
        "{}/tests/fixtures/selection/vader-p2.csv",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let osu = parse_forced_runs(&sweep, ForcedStat::Median).unwrap();
    assert_eq!(osu.len(), 915);
    let check = check_call_costs(&osu, spec.as_model(), operator, local.with_calls(fit.calls))
        .unwrap()
        .unwrap();
    let all = &check.overall;
    assert_eq!(
        (
            all.cells,
            all.picks_within_10pct_without,
            all.picks_within_10pct_with
        ),
        (163, 113, 136)
    );
}

/// A sweep's rows: only `forced:ID:SEGMENT` ones are runs; OSU's size is the problem's
/// message (one rank's block for gather), `avg_us` microseconds; reductions of fewer than 4
/// bytes (no `float`) are skipped; malformed rows are errors naming the line.
#[test]
fn sweep_rows_are_read_and_bad_ones_are_errors_naming_the_line() {
    let head = "platform,collective,procs,config,repeat,bytes,avg_us,min_us,max_us,iterations\n";
    let text = format!(
        "{head}p,bcast,4,default,1,8,2.0,1,3,50\n\
         p,gather,4,forced:2:0,1,64,3.5,1,3,50\n\
         p,reduce,4,forced:1:0,1,2,9.0,1,3,50\n\
         p,reduce_scatter,4,forced:3:0,1,1024,7.0,1,3,50\n\
         p,barrier,4,forced:2:0,1,0,5.0,1,3,50\n\
         p,bcast,4,rules,1,8,2.0,1,3,50\n"
    );
    let runs = parse_forced_runs(&text, ForcedStat::Pipelined).unwrap();
    let got: Vec<(Collective, u32, u64, f64)> = runs
        .iter()
        .map(|r| (r.collective, r.algorithm, r.bytes, r.seconds))
        .collect();
    assert_eq!(
        got,
        [
            (Collective::Gather, 2, 64, 3.5e-6),
            (Collective::ReduceScatter, 3, 1024, 7.0e-6),
            (Collective::Barrier, 2, 0, 5.0e-6),
        ]
    );
    for (row, wanted) in [
        ("p,gather,4,forced:9:0,1,64,3.5,1,3,50", "gather has 1..="),
        (
            "p,gather,4,forced:2,1,64,3.5,1,3,50",
            "not forced:ID:SEGMENT",
        ),
        ("p,gather,4,forced:x:0,1,64,3.5,1,3,50", "`config` `x`"),
        (
            "p,gatherv,4,forced:1:0,1,64,3.5,1,3,50",
            "unknown collective",
        ),
        ("p,gather,0,forced:1:0,1,64,3.5,1,3,50", "`procs` is 0"),
        ("p,gather,4,forced:1:0,1,64,-1,1,3,50", "must be between"),
        ("p,gather,4,forced:1:0,1,64,NaN,1,3,50", "must be between"),
        ("p,gather,4,forced:1:0", "no `bytes` field"),
    ] {
        let err = parse_forced_runs(&format!("{head}{row}\n"), ForcedStat::Median)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("line 2") && err.contains(wanted),
            "{row}: {err}"
        );
    }
    // the same configuration, repeat and size twice: refused (the second value would count as
    // another run), naming both lines; another repeat of it is another run
    let row = "p,gather,4,forced:2:0,1,64,3.5,1,3,50";
    let err = parse_forced_runs(&format!("{head}{row}\n{row}\n"), ForcedStat::Median)
        .unwrap_err()
        .to_string();
    assert!(err.contains("line 3") && err.contains("line 2"), "{err}");
    let conflicting = "p,gather,4,forced:2:0,1,64,4.0,1,3,50";
    assert!(
        parse_forced_runs(&format!("{head}{row}\n{conflicting}\n"), ForcedStat::Median).is_err()
    );
    let again = "p,gather,4,forced:2:0,2,64,3.6,1,3,50";
    assert_eq!(
        parse_forced_runs(&format!("{head}{row}\n{again}\n"), ForcedStat::Median)
            .unwrap()
            .len(),
        2
    );
}

/// The emulated cluster's model checked on OSU's forced runs at 4 nodes × 1 rank
/// (`tests/fixtures/selection/cluster-1gbit-4x1.csv`, 1 861 forced rows): the model's picks
/// within 10 % of the fastest forced algorithm, 73 of 163 cells without local work, 86 with the
/// host's (`cluster-1gbit-model-local.json`), as docs/ACCURACY.md reports.
#[test]
fn the_hosts_local_work_improves_the_picks_on_the_emulated_cluster() {
    use commcost::calibrate::check_call_costs;
    let dir = format!("{}/tests/fixtures/selection", env!("CARGO_MANIFEST_DIR"));
    let read = |name: &str| std::fs::read_to_string(format!("{dir}/{name}")).unwrap();
    let runs = parse_forced_runs(&read("cluster-1gbit-4x1.csv"), ForcedStat::Median).unwrap();
    assert_eq!(runs.len(), 1861);
    let picks = |file: &str| {
        let model: serde_json::Value = serde_json::from_str(&read(file)).unwrap();
        let spec: ModelSpec = serde_json::from_value(model["spec"].clone()).unwrap();
        let (local, operator) = match model.get("local") {
            Some(l) => (
                serde_json::from_value(l["work"].clone()).unwrap(),
                serde_json::from_value(l["operator"].clone()).unwrap(),
            ),
            None => (LocalWork::FREE, Operator::FREE),
        };
        let check = check_call_costs(&runs, spec.as_model(), operator, local)
            .unwrap()
            .unwrap();
        (
            check.overall.cells,
            check.overall.picks_within_10pct_without,
        )
    };
    assert_eq!(picks("cluster-1gbit-model.json"), (163, 73));
    assert_eq!(picks("cluster-1gbit-model-local.json"), (163, 86));
}
