//! The MPI prober between two ranks (feature `mpi`): PRTT grows with `n` and `s`, and the
//! assessment yields finite, non-negative parameters with at least one protocol range.
//!
//! `cargo test --features mpi --test mpi_prober` needs an MPI library: run directly, the test
//! starts itself again under `mpirun -np 2` and checks that both ranks succeed; under mpirun
//! (Open MPI sets `OMPI_COMM_WORLD_SIZE`) rank 0 measures and rank 1 serves.
#![cfg(feature = "mpi")]

use std::process::Command;
use std::time::Duration;

use commcost::calibrate::{AssessmentConfig, assess_loggp};
use commcost::probe::mpi::{MpiProber, serve};
use commcost::probe::{Budget, Methodology};
use commcost::probe::{Prober, PrttPlan, measure_prtt};
use mpi::traits::Communicator;

const TEST: &str = "prtt_over_two_ranks";

#[test]
fn prtt_over_two_ranks() {
    if std::env::var_os("OMPI_COMM_WORLD_SIZE").is_none() && std::env::var_os("PMI_SIZE").is_none()
    {
        let exe = std::env::current_exe().expect("test binary path");
        let status = Command::new("mpirun")
            .args([
                "--allow-run-as-root",
                "--oversubscribe",
                "--mca",
                "btl",
                "self,vader",
                "-np",
                "2",
            ])
            .arg(exe)
            .args(["--exact", TEST, "--test-threads=1", "--nocapture"])
            .status()
            .expect("mpirun must be installed for the mpi feature's tests");
        assert!(status.success(), "the test under mpirun failed: {status}");
        return;
    }
    let universe = mpi::initialize().expect("MPI initialises");
    let world = universe.world();
    assert_eq!(world.size(), 2);
    let (max, span) = (1u64 << 14, 1u64 << 16);
    if world.rank() == 1 {
        serve(&world, 0, max as usize, span as usize).expect("server");
        return;
    }
    let budget = Budget::new(Duration::from_secs(120), 1 << 24);
    let mut prober = MpiProber::new(&world, 1, max, span, Methodology::quick(), budget).unwrap();
    // a failure here must not leave rank 1 waiting: abort the whole job instead
    let checks = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let one_small = prober.prtt(1, 0.0, 1).unwrap();
        let one_large = prober.prtt(1, 0.0, max).unwrap();
        let many_large = prober.prtt(16, 0.0, max).unwrap();
        assert!(one_small > 0.0 && one_small.is_finite());
        assert!(
            one_large > one_small,
            "PRTT grows with s: {one_small} -> {one_large}"
        );
        assert!(
            many_large > one_large,
            "PRTT grows with n: {one_large} -> {many_large}"
        );
        let plan = PrttPlan {
            sizes: (0..8).map(|k| 1 + 2048 * k).collect(),
            n: 16,
            passes: 2,
            seed: 1,
        };
        let measured = measure_prtt(&mut prober, &plan).unwrap();
        let a = assess_loggp(&measured.samples, &AssessmentConfig::default()).unwrap();
        assert!(!a.ranges.is_empty());
        for range in a.model.ranges() {
            let m = range.model();
            for v in [m.latency(), m.overhead(), m.gap(), m.gap_per_byte()] {
                assert!(v.is_finite() && v >= 0.0, "{m:?}");
            }
        }
    }));
    match checks {
        Ok(()) => prober.finish(),
        Err(_) => world.abort(1),
    }
}
