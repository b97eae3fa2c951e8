//! Per-call costs of Open MPI's algorithms fitted to real forced runs
//! (`tests/fixtures/collectives/ompi_runs.csv`: Open MPI 4.1.4 over shared memory, every
//! algorithm forced, 2, 4 and 8 processes; how it was made: that directory's NOTE.md), priced
//! by the model of docs/ACCURACY.md's selection measurements on the same machine
//! (`tests/fixtures/selection/vader-model-local.json`: LogGP with four ranges from OSU runs,
//! and the local work `calibrate local` measured). The fit sees only 2-process runs of at most
//! 512 B; the checks are on the runs it did not see. The numbers are those of docs/ACCURACY.md.

use commcost::ModelSpec;
use commcost::calibrate::{CallCostPlan, ForcedStat, fit_call_costs, parse_forced_runs};
use commcost::collectives::ompi::OmpiCollective;
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
    let binomial = fit.calls.get(OmpiCollective::Bcast, 6);
    assert!(binomial > 0.1e-6 && binomial < 1e-6, "{binomial}");
}

/// The costs fitted on one run (`forced_runs_p2.csv`, taken by `calibrate collectives
/// --measure`) checked on another (`ompi_runs.csv`, taken earlier by the sweep script): the
/// picks improve at every process count, most at 8.
#[test]
fn call_costs_fitted_on_one_run_improve_the_picks_of_another() {
    use commcost::calibrate::check_call_costs;
    let (spec, local, operator) = vader();
    let fresh = parse_forced_runs(&fixture("forced_runs_p2.csv"), ForcedStat::Median).unwrap();
    let fit = fit_call_costs(
        &fresh,
        spec.as_model(),
        operator,
        local,
        &CallCostPlan::default(),
    )
    .unwrap();
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
    assert_eq!(picks, [(2, 71, 37, 41), (4, 71, 35, 37), (8, 71, 18, 33)]);
}
