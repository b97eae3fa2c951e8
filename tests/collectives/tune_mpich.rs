//! Tuning MPICH: MPICH's default table read as MPICH reads it, the selection JSON written from
//! decisions, and a tuning of MPICH planned, measured and written.

use std::time::Duration;

use commcost::collectives::Collective;
use commcost::export::{
    ExportError, MpichDecision, MpichVersion, mpich_decide, mpich_json_decided,
};
use commcost::presets;
use commcost::tune::{Library, Run, Runner, TuneConfig, TuneError, Verdict, plan_tuning, tune};

const V4_0: MpichVersion = MpichVersion::V4_0;

/// Cells read by hand from `maint/tuning/coll/mpir/generic.json` of MPICH 4.0.2 (the
/// `comm_hierarchy=any` branches: a flat communicator; `MPI_DOUBLE`, so count = bytes / 8).
#[test]
fn the_default_table_decides_as_read_by_hand() {
    let cases: [(Collective, u64, u64, &str); 17] = [
        // bcast: `comm_size<8` binomial; powers of two: <= 12288 binomial, <= 524288
        // scatter + recursive-doubling allgather, then scatter + ring allgather; others
        // (`comm_size=any`): <= 12288 binomial, then scatter + ring allgather
        (Collective::Bcast, 4, 1 << 20, "MPIR_Bcast_intra_binomial"),
        (Collective::Bcast, 8, 12288, "MPIR_Bcast_intra_binomial"),
        (
            Collective::Bcast,
            8,
            12296,
            "MPIR_Bcast_intra_scatter_recursive_doubling_allgather",
        ),
        (
            Collective::Bcast,
            8,
            1 << 20,
            "MPIR_Bcast_intra_scatter_ring_allgather",
        ),
        (
            Collective::Bcast,
            12,
            65536,
            "MPIR_Bcast_intra_scatter_ring_allgather",
        ),
        // allreduce: <= 8 B recursive doubling; built-in op: count < pof2 recursive doubling,
        // else reduce-scatter + allgather
        (
            Collective::Allreduce,
            4,
            8,
            "MPIR_Allreduce_intra_recursive_doubling",
        ),
        (
            Collective::Allreduce,
            8,
            56,
            "MPIR_Allreduce_intra_recursive_doubling",
        ),
        (
            Collective::Allreduce,
            8,
            64,
            "MPIR_Allreduce_intra_reduce_scatter_allgather",
        ),
        // allgather: total = block x P; powers of two < 524288 recursive doubling, else ring;
        // others < 81920 Bruck, else ring
        (
            Collective::Allgather,
            4,
            131064,
            "MPIR_Allgather_intra_recursive_doubling",
        ),
        (
            Collective::Allgather,
            4,
            131072,
            "MPIR_Allgather_intra_ring",
        ),
        (
            Collective::Allgather,
            3,
            8192,
            "MPIR_Allgather_intra_brucks",
        ),
        // alltoall, send buffer not in place: `comm_size<8` <= 32768 scattered, else pairwise;
        // larger: <= 256 Bruck
        (
            Collective::Alltoall,
            4,
            32768,
            "MPIR_Alltoall_intra_scattered",
        ),
        (
            Collective::Alltoall,
            4,
            32776,
            "MPIR_Alltoall_intra_pairwise",
        ),
        (Collective::Alltoall, 16, 256, "MPIR_Alltoall_intra_brucks"),
        // `comm_size<8` below `is_sendbuf_inplace=no` is evaluated while searching, where
        // MPICH 4.0 - 4.2 read it as `<= 8`
        (
            Collective::Alltoall,
            8,
            256,
            "MPIR_Alltoall_intra_scattered",
        ),
        (Collective::Gather, 4, 64, "MPIR_Gather_intra_binomial"),
        (
            Collective::Barrier,
            4,
            0,
            "MPIR_Barrier_intra_dissemination",
        ),
    ];
    for (c, p, bytes, want) in cases {
        assert_eq!(
            V4_0.default_algorithm(c, p, bytes).as_deref(),
            Some(want),
            "{c} on {p} ranks, {bytes} B"
        );
    }
    // 4.1's table names its barrier k_dissemination
    assert_eq!(
        MpichVersion::V4_1
            .default_algorithm(Collective::Barrier, 4, 0)
            .as_deref(),
        Some("MPIR_Barrier_intra_k_dissemination")
    );
    // no subtree, not a table
    assert_eq!(
        V4_0.default_algorithm(Collective::ReduceScatter, 4, 64),
        None
    );
    assert_eq!(mpich_decide("{", Collective::Bcast, 4, 64), None);
    assert_eq!(
        mpich_decide(
            "{\"collective=bcast\": {\"odd<3\": {}}}",
            Collective::Bcast,
            4,
            64
        ),
        None
    );
}

fn decision(c: Collective, processes: u64, size: u64, function: Option<&str>) -> MpichDecision {
    MpichDecision {
        collective: c,
        processes,
        size,
        function: function.map(String::from),
    }
}

#[test]
fn a_decided_file_runs_each_decision_and_mpichs_own_choice_elsewhere() {
    let rd = "MPIR_Allgather_intra_recursive_doubling";
    let ring = "MPIR_Bcast_intra_scatter_ring_allgather";
    let decisions = [
        decision(Collective::Bcast, 4, 0, None),
        decision(Collective::Bcast, 4, 65536, Some(ring)),
        decision(Collective::Bcast, 8, 0, Some("MPIR_Bcast_intra_binomial")),
        decision(Collective::Allgather, 4, 0, Some(rd)),
        decision(
            Collective::Allgather,
            4,
            4096,
            Some("MPIR_Allgather_intra_ring"),
        ),
        decision(Collective::Allgather, 4, 65536, None),
    ];
    for version in MpichVersion::ALL {
        let json = mpich_json_decided(version, &decisions).unwrap();
        let at = |c, p, bytes| mpich_decide(&json, c, p, bytes);
        let default = |c, p, bytes| version.default_algorithm(c, p, bytes);
        // below the first communicator size and in default ranges: MPICH's own choice
        for bytes in [8, 4096, 1 << 20] {
            assert_eq!(
                at(Collective::Bcast, 3, bytes),
                default(Collective::Bcast, 3, bytes)
            );
        }
        assert_eq!(
            at(Collective::Bcast, 4, 8),
            default(Collective::Bcast, 4, 8)
        );
        // the switches, on exactly the decisions' communicator sizes
        assert_eq!(at(Collective::Bcast, 4, 65536).as_deref(), Some(ring));
        assert_eq!(at(Collective::Bcast, 4, 1 << 20).as_deref(), Some(ring));
        for bytes in [8, 1 << 20] {
            assert_eq!(
                at(Collective::Bcast, 8, bytes).as_deref(),
                Some("MPIR_Bcast_intra_binomial")
            );
        }
        // every other communicator size: MPICH's own choice (scatter + ring allgather for
        // 1 MiB on 8 or more ranks that are not a power of two)
        for p in [2, 3, 5, 7, 9, 64, 100] {
            for bytes in [8, 12288, 12296, 65536, 1 << 20] {
                assert_eq!(
                    at(Collective::Bcast, p, bytes),
                    default(Collective::Bcast, p, bytes),
                    "{p} {bytes}"
                );
            }
        }
        assert_eq!(
            at(Collective::Bcast, 12, 1 << 20).as_deref(),
            Some("MPIR_Bcast_intra_scatter_ring_allgather")
        );
        // MPICH's own choice where the decision is `None` follows the table's own ranges
        // (on 8 ranks: binomial to 12 KiB, then scatter + recursive-doubling allgather)
        let own = mpich_json_decided(version, &[decision(Collective::Bcast, 8, 0, None)]).unwrap();
        for bytes in [8, 12288, 12296, 524288, 524296, 1 << 22] {
            assert_eq!(
                mpich_decide(&own, Collective::Bcast, 8, bytes),
                default(Collective::Bcast, 8, bytes),
                "{bytes}"
            );
        }
        // recursive doubling only on powers of two: on 6 ranks MPICH's own choice
        assert_eq!(at(Collective::Allgather, 4, 8).as_deref(), Some(rd));
        assert_eq!(
            at(Collective::Allgather, 6, 8),
            default(Collective::Allgather, 6, 8)
        );
        assert_ne!(at(Collective::Allgather, 6, 8).as_deref(), Some(rd));
        // allgather's key is the total (block x P): ring from 4 KiB in total, MPICH's own
        // choice (recursive doubling, on 4 ranks below 512 KiB) from 64 KiB in total
        assert_eq!(
            at(Collective::Allgather, 4, 2048).as_deref(),
            Some("MPIR_Allgather_intra_ring")
        );
        assert_eq!(
            at(Collective::Allgather, 4, 16384).as_deref(),
            Some(rd),
            "{version}"
        );
        assert_eq!(
            at(Collective::Allgather, 4, 16384),
            default(Collective::Allgather, 4, 16384)
        );
        // a collective no decision names: unchanged
        for bytes in [8, 1 << 20] {
            assert_eq!(
                at(Collective::Alltoall, 4, bytes),
                default(Collective::Alltoall, 4, bytes)
            );
        }
    }
}

#[test]
fn decisions_mpich_cannot_run_are_errors_naming_them() {
    let bad = |d: &[MpichDecision]| mpich_json_decided(V4_0, d).unwrap_err();
    let e = bad(&[decision(
        Collective::Bcast,
        4,
        0,
        Some("MPIR_Bcast_intra_nonesuch"),
    )]);
    assert!(e.to_string().contains("MPIR_Bcast_intra_nonesuch"), "{e}");
    // another collective's function; 4.0 has no ring allreduce
    bad(&[decision(
        Collective::Bcast,
        4,
        0,
        Some("MPIR_Allgather_intra_ring"),
    )]);
    bad(&[decision(
        Collective::Allreduce,
        4,
        0,
        Some("MPIR_Allreduce_intra_ring"),
    )]);
    assert!(
        mpich_json_decided(
            MpichVersion::V4_1,
            &[decision(
                Collective::Allreduce,
                4,
                0,
                Some("MPIR_Allreduce_intra_ring")
            )]
        )
        .is_ok()
    );
    // out of order, repeated, split, zero ranks
    bad(&[
        decision(Collective::Bcast, 8, 0, None),
        decision(Collective::Bcast, 4, 0, None),
    ]);
    bad(&[
        decision(Collective::Bcast, 4, 64, None),
        decision(Collective::Bcast, 4, 64, None),
    ]);
    bad(&[
        decision(Collective::Bcast, 4, 0, None),
        decision(Collective::Gather, 4, 0, None),
        decision(Collective::Bcast, 8, 0, None),
    ]);
    bad(&[decision(Collective::Bcast, 0, 0, None)]);
    assert!(matches!(
        bad(&[decision(Collective::ReduceScatter, 4, 0, None)]),
        ExportError::Unsupported { .. }
    ));
}

/// Every forced algorithm takes `k` times the model's price, the default its price.
struct Machine(f64);

impl Runner for Machine {
    fn time(&mut self, run: &Run) -> Result<Vec<f64>, String> {
        let k = if run.algorithm.is_none() { 1.0 } else { self.0 };
        Ok(run.predicted.iter().map(|t| k * t.max(1e-6)).collect())
    }
}

fn mpich_config(collectives: Vec<Collective>) -> TuneConfig {
    TuneConfig {
        library: Library::Mpich(V4_0),
        ..TuneConfig::new(collectives, vec![4, 8], vec![8, 4096, 65536, 1 << 20])
    }
}

#[test]
fn a_tuning_of_mpich_plans_mpichs_algorithms_beside_its_table() {
    let model = presets::mpich2_tcp();
    let config = mpich_config(vec![
        Collective::Bcast,
        Collective::Allreduce,
        Collective::Allgather,
        Collective::Alltoall,
    ]);
    let plan = plan_tuning(&model, &config).unwrap();
    assert_eq!(plan.library, config.library);
    let mut candidates = 0;
    for cell in &plan.cells {
        assert_eq!(
            Some(&cell.default_name),
            V4_0.default_algorithm(cell.collective, cell.processes, cell.bytes)
                .as_ref(),
            "{cell:?}"
        );
        for (f, _) in &cell.candidates {
            candidates += 1;
            let function = f.mpich.as_deref().unwrap();
            // never the default itself (its own run measures it), and a file with it loads
            assert_ne!(function, cell.default_name);
            let d = decision(cell.collective, cell.processes, 0, Some(function));
            mpich_json_decided(V4_0, &[d]).unwrap();
        }
    }
    assert!(candidates > 0);
    // reduce_scatter has no subtree in MPICH's file; scan no algorithm MPICH's family prices
    for c in [Collective::ReduceScatter, Collective::Scan] {
        let e = plan_tuning(&model, &mpich_config(vec![c])).unwrap_err();
        assert!(
            matches!(
                e,
                TuneError::Config {
                    field: "collectives",
                    ..
                }
            ),
            "{e}"
        );
    }
}

#[test]
fn a_tuning_of_mpich_writes_mpichs_file_and_only_that() {
    let model = presets::mpich2_tcp();
    let config = mpich_config(vec![Collective::Bcast, Collective::Allgather]);
    let plan = plan_tuning(&model, &config).unwrap();
    let report = tune(
        plan,
        &mut Machine(0.5),
        &config,
        Duration::from_secs(60),
        &mut |_| {},
    );
    let json = report.mpich_json().unwrap();
    let mut switched = 0;
    for (result, cell) in report.cells.iter().zip(&report.plan.cells) {
        let chosen = mpich_decide(&json, cell.collective, cell.processes, cell.bytes);
        match &result.verdict {
            Verdict::Switch { algorithm, .. } => {
                switched += 1;
                assert_eq!(chosen, algorithm.mpich, "{cell:?}");
            }
            _ => assert_eq!(chosen.as_ref(), Some(&cell.default_name), "{cell:?}"),
        }
    }
    assert!(switched > 0);
    assert!(matches!(
        report.rules_filled(&model, &config),
        Err(TuneError::Rules(_))
    ));
    // a tuning of Open MPI has no MPICH file
    let ompi = TuneConfig::new(vec![Collective::Bcast], vec![4], vec![8]);
    let plan = plan_tuning(&model, &ompi).unwrap();
    let report = tune(
        plan,
        &mut Machine(0.5),
        &ompi,
        Duration::from_secs(60),
        &mut |_| {},
    );
    assert!(matches!(report.mpich_json(), Err(TuneError::Rules(_))));
}
