//! Per-call costs of Open MPI's algorithms fitted to real forced runs
//! (`tests/fixtures/collectives/ompi_runs.csv`: Open MPI 4.1.4 over shared memory, every
//! algorithm forced, 2, 4 and 8 processes; how it was made: that directory's NOTE.md), priced
//! by the pLogP the crate calibrated on the same machine (`mpi_calibrate_2ranks_plogp.json`).
//! The fit sees only 2-process runs of at most 512 B; the checks are on the runs it did not see.

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

fn plogp() -> ModelSpec {
    let all: serde_json::Value =
        serde_json::from_str(&fixture("mpi_calibrate_2ranks_plogp.json")).unwrap();
    serde_json::from_value(all["plogp_mpi"].clone()).unwrap()
}

#[test]
fn call_costs_make_the_two_process_picks_match_the_measured_best() {
    let runs = parse_forced_runs(&fixture("ompi_runs.csv"), ForcedStat::Median).unwrap();
    // 9 collectives' forced runs (defaults and reduce_scatter_block's recursive doubling
    // skipped): the file has 1 781 rows
    assert!(runs.len() > 1500, "{}", runs.len());
    let spec = plogp();
    let fit = fit_call_costs(
        &runs,
        spec.as_model(),
        Operator::FREE,
        LocalWork::FREE,
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
    // without call costs the model's pick is within 10 % of the fastest forced algorithm in
    // fewer than half of the cells; with them in at least 80 %
    assert!(p2.picks_within_10pct_without < p2.cells / 2, "{p2:?}");
    assert!(p2.picks_within_10pct_with * 10 >= p2.cells * 8, "{p2:?}");
    // the costs are sub-microsecond to a few microseconds, as the 8 B runs differ
    for f in &fit.fitted {
        assert!(f.seconds < 5e-6, "{f:?}");
    }
    // binomial bcast is measured at 8 B as taking about 0.3 µs more than the model prices
    let binomial = fit.calls.get(OmpiCollective::Bcast, 6);
    assert!(binomial > 0.1e-6 && binomial < 1e-6, "{binomial}");
}
