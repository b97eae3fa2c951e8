//! `calibrate mpi`: LogGP with protocol ranges, pLogP or log_3 P over MPI, between ranks 0 and
//! 1 of an MPI job.

use std::path::PathBuf;
#[cfg(feature = "mpi")]
use std::time::Duration;

#[cfg(feature = "mpi")]
use commcost::calibrate::{AssessmentConfig, assess_loggp, assess_shaped_link, relative_errors};
#[cfg(feature = "mpi")]
use commcost::probe::{Budget, Methodology, Prober, PrttPlan, measure_prtt};
#[cfg(feature = "mpi")]
use commcost::sim::Platform;
#[cfg(feature = "mpi")]
use commcost::{CommModel, Message, ModelSpec};
#[cfg(feature = "mpi")]
use serde_json::{Map, Value};

use super::MpiModel;
#[cfg(feature = "mpi")]
use super::{
    Counting, adjustment_lines, describe_ranges, finish, finish_on, loggp_roles, pct, progress_bar,
};
use crate::{Failure, fail};

#[cfg(not(feature = "mpi"))]
pub(super) fn mpi_calibration(
    _: Option<PathBuf>,
    _: bool,
    _: MpiModel,
    _: bool,
    _: u64,
) -> Result<(), Failure> {
    fail(
        "this commcost was built without MPI: `cargo install --path cli --features mpi`, then \
         `mpirun -np 2 commcost calibrate mpi -o FILE` (or the library's example mpi_calibrate)",
    )
}

#[cfg(feature = "mpi")]
pub(super) fn mpi_calibration(
    output: Option<PathBuf>,
    quick: bool,
    which: MpiModel,
    separate_buffers: bool,
    max_size: u64,
) -> Result<(), Failure> {
    use commcost::calibrate::derive_log3p;
    use commcost::probe::mpi::{MpiProber, PayloadBuffers, measure_layouts, serve};
    use commcost::probe::{CopyKind, CopyPlan, Log3PPlan, measure_copies};
    use mpi::traits::Communicator;

    const DENSE: u64 = 1 << 16;
    if !(DENSE..=1 << 26).contains(&max_size) {
        return fail(format!(
            "--max-size {max_size}: between 64 KiB and 64 MiB (65536 ..= 67108864 bytes)"
        ));
    }
    let Some(universe) = mpi::initialize() else {
        return fail("MPI could not be initialised");
    };
    let world = universe.world();
    if world.size() < 2 {
        return fail("run inside an MPI job of two ranks: mpirun -np 2 commcost calibrate mpi");
    }
    let l3_plan = Log3PPlan {
        sizes: vec![1 << 10, 1 << 12, 1 << 14, DENSE],
        strides: vec![24, 80, 320, 1280],
        element: 8,
    };
    let span = l3_plan.span().max(max_size);
    match world.rank() {
        0 => {}
        1 => return Ok(serve(&world, 0, max_size as usize, span as usize)?),
        _ => return Ok(()),
    }
    if output.is_none() {
        return fail("give the model file to write with -o FILE");
    }
    let methodology = if quick {
        Methodology::quick()
    } else {
        Methodology::standard()
    };
    let budget = Budget::new(Duration::from_secs(600), 1 << 30);
    let payload = if separate_buffers {
        PayloadBuffers::Separate
    } else {
        PayloadBuffers::Echo
    };
    let mut prober = MpiProber::new(&world, 1, max_size, span, methodology, budget.clone())?
        .with_payload_buffers(payload)?;
    let buffers = if separate_buffers {
        "sent from buffers the sender never writes"
    } else {
        "each returned from the buffer it was received into"
    };
    if which == MpiModel::Log3p {
        let mut quiet = |_: &str, _: usize, _: usize| {};
        let layouts = l3_plan.layouts()?;
        let times = measure_layouts(&mut prober, &layouts, &methodology, &budget, &mut quiet);
        prober.finish();
        let times = times?;
        let copies = measure_copies(
            &CopyPlan {
                element: 8,
                sizes: l3_plan.sizes.clone(),
                strides: vec![],
                kinds: vec![CopyKind::Contiguous],
            },
            &methodology,
            &budget,
            &mut quiet,
        )?;
        let copy_times: Vec<f64> = copies.iter().map(|c| c.time).collect();
        let (measurements, cleaning) = l3_plan.measurements(&times, &copy_times)?;
        let remote = l3_plan.remote_strided(&times)?;
        let log3p = derive_log3p(&measurements)?;
        let pairs: Vec<(f64, f64)> = remote.iter().map(|(m, t)| (log3p.p2p(m), *t)).collect();
        let mut acc = Map::new();
        if let Some(e) = relative_errors(&pairs) {
            acc.insert("remote_strided_transfers".into(), pct(e));
        }
        let mut roles = Map::new();
        roles.insert(
            "log3p".into(),
            "o_mw, l_mw (middleware, per size and stride), o_net (network, per size)".into(),
        );
        let adjustments = vec![format!(
            "{} strided sends to self faster than contiguous, {} memory copies slower than \
             the send to self and {} remote transfers faster than the middleware were adjusted \
             (log_3 P measurement cleaning)",
            cleaning.strided_faster, cleaning.copy_slower, cleaning.remote_faster
        )];
        return finish(
            output,
            log3p.into(),
            format!(
                "MPI half round trips between ranks 0 and 1 with vector datatypes (sizes {:?} \
                 bytes, strides {:?} bytes) and memory copies",
                l3_plan.sizes, l3_plan.strides
            ),
            "log_3 P derivation from half round trips (Cameron, Ge & Sun, IEEE Trans. \
             Computers 2007, §4.1), commcost::calibrate::derive_log3p",
            vec![],
            roles,
            acc,
            adjustments,
        );
    }
    // dense where MPI libraries switch protocol (small-message paths, eager limits), then the
    // powers of two up to --max-size
    let plan = PrttPlan::mpi(max_size, methodology.passes, quick);
    let sizes = &plan.sizes;
    let bar = progress_bar(
        (3 * sizes.len() * (methodology.passes + 1)) as u64,
        "MPI PRTT",
    );
    let mut counting = Counting {
        inner: &mut prober,
        bar: &bar,
    };
    let measured = measure_prtt(&mut counting, &plan);
    bar.finish();
    let measured = measured?;
    let assessment = assess_loggp(&measured.samples, &AssessmentConfig::default())?;
    describe_ranges(&assessment.model)?;
    // held out: half round trips between the grid's sizes
    let mut held = Vec::new();
    for s in sizes.windows(2).map(|w| (w[0] + w[1]) / 2).step_by(3) {
        held.push((s, prober.prtt(1, 0.0, s)? / 2.0));
    }
    prober.finish();
    let shaped = if which == MpiModel::Shaped {
        let link = assess_shaped_link(&assessment)?;
        println!(
            "shaped link: G = {:.4} ns/B and g = {:.3} µs of a train, o = {:.3} µs, L = {:.3} µs; \
             a lone message's first {} bytes cross without G (the file's platform.link_burst {})",
            link.model.gap_per_byte() * 1e9,
            link.model.gap() * 1e6,
            link.model.overhead() * 1e6,
            link.model.latency() * 1e6,
            link.burst,
            link.burst
        );
        Some(link)
    } else {
        None
    };
    let spec: ModelSpec = match (&shaped, which) {
        (Some(link), _) => link.model.clone().into(),
        (None, MpiModel::Plogp) => assessment.plogp.clone().into(),
        _ => assessment.model.clone().into(),
    };
    let errors_of = |model: &dyn CommModel| {
        relative_errors(
            &held
                .iter()
                .map(|&(s, t)| (model.p2p(&Message::contiguous(s)), t))
                .collect::<Vec<_>>(),
        )
    };
    let mut acc = Map::new();
    if let Some(e) = errors_of(&spec) {
        acc.insert("held_out_half_round_trips".into(), pct(e));
    }
    let other: ModelSpec = match which {
        MpiModel::Plogp => assessment.model.clone().into(),
        _ => assessment.plogp.clone().into(),
    };
    if let Some(e) = errors_of(&other) {
        let name = if which == MpiModel::Plogp {
            "loggp"
        } else {
            "plogp"
        };
        acc.insert(
            format!("{name}_for_comparison_held_out_half_round_trips"),
            pct(e),
        );
    }
    if let Some(link) = &shaped {
        acc.insert(
            "one_message_with_burst_credit".into(),
            pct(link.one_way_error),
        );
    }
    let (method, roles) = match which {
        MpiModel::Shaped => (
            "a link shaped by a token bucket from the parametrised round trips: LogGP of the \
             train (G_all, eq. (7) of Hoefler, Lichei & Rehm, IPDPS 2007) and the credit a lone \
             message gets, commcost::calibrate::assess_shaped_link",
            {
                let mut roles = loggp_roles();
                roles.insert(
                    "link_burst".into(),
                    format!(
                        "{} bytes: a lone message's bytes crossing without G (the simulator's \
                         link_burst, --link-burst)",
                        shaped.as_ref().map_or(0, |l| l.burst)
                    )
                    .into(),
                );
                roles
            },
        ),
        MpiModel::Plogp => (
            "pLogP from the parametrised round trips (Kielmann, Bal & Verstoep 2000; \
             commcost::calibrate::assess_loggp's plogp)",
            plogp_roles_measured(),
        ),
        _ => (
            "LogGP parameter assessment with protocol-change detection (Hoefler, Lichei & \
             Rehm, IPDPS 2007), commcost::calibrate::assess_loggp",
            loggp_roles(),
        ),
    };
    // the shaped link's burst goes into the file: every simulation of the model uses it
    let platform = shaped.as_ref().map(|link| Platform {
        link_burst: Some(link.burst),
        ..Platform::PLAIN
    });
    finish_on(
        output,
        (spec, platform),
        format!(
            "MPI round trips between ranks 0 and 1, PRTT(1,0,s), PRTT(16,0,s), PRTT(16,d,s), \
             {} sizes 1 B..{} B, {} shuffled passes, payloads {buffers}",
            sizes.len(),
            sizes.last().copied().unwrap_or(0),
            methodology.passes
        ),
        method,
        vec![],
        roles,
        acc,
        adjustment_lines(&assessment.adjustments),
    )
}

/// The parameter roles of a pLogP measured by round trips (its overheads are measured).
#[cfg(feature = "mpi")]
fn plogp_roles_measured() -> Map<String, Value> {
    let mut m = Map::new();
    for (k, v) in [
        (
            "latency",
            "L: end-to-end latency without the sender's share g(m) (s)",
        ),
        (
            "gap",
            "g(m): time between consecutive messages of m bytes (a table, s)",
        ),
        (
            "send_overhead",
            "o_s(m): CPU time to send m bytes (a table, s)",
        ),
        (
            "recv_overhead",
            "o_r(m): CPU time to receive m bytes (a table, s)",
        ),
        (
            "processors",
            "P: processes the parameters were measured with",
        ),
    ] {
        m.insert(k.into(), v.into());
    }
    m
}
