//! No collective algorithm is cheaper than one message of its size from the root.
//!
//! With `P >= 2` processes, a broadcast, scatter, gather, reduction, scan, allgather or
//! all-to-all moves at least one message of the collective's size (as the collectives module
//! counts it) between two processes, so its predicted time is at least that message's `p2p`.
//! This is an independent, physical oracle: it holds for every model whose per-message
//! quantities are meaningful (a sender cannot emit the next message before the current one's
//! bytes have left it), and fails for a model whose `send_interval` is 0 while its `p2p` grows
//! with the size (a pipelined broadcast of `q` segments would then cost one segment's time).
//!
//! The bound needs one more physical property: splitting a message does not make its bytes
//! cheaper (`k p2p(m / k) >= p2p(m)`, true of every affine or concave cost with a non-negative
//! start). A protocol model whose later range starts higher than the earlier one ends (a
//! rendezvous switch) breaks it on purpose — eager pieces can beat one rendezvous message, and
//! MPI libraries segment for that reason — so the protocol models here are the single-range
//! one and the Table 2 presets. LogGPO is listed with the same eager and rendezvous mechanism
//! data in both ranges' overhead tables (affine, non-negative starts).

use commcost::collectives::{
    Algorithm, Allgather, Allreduce, Alltoall, Bcast, Gather, Problem, Reduce, Scan, Scatter,
};
use commcost::models::copy_transfer::Composition;
use commcost::models::copy_transfer::Stage;
use commcost::models::loggpo::Mechanism;
use commcost::models::loggpo::Progress;
use commcost::table::Table1D;
use commcost::{
    CommModel, CopyTransfer, LogGP, LogGpo, LogNP, LogP, MemoryLogP, Message, MlinesModel, PLogP,
    Pram, Protocols, presets,
};
use proptest::prelude::*;

const US: f64 = 1e-6;

/// One model of every kind the crate has, with parameters drawn from `k` (in `[0, 1)`).
fn every_model(k: [f64; 4]) -> Vec<(&'static str, Box<dyn CommModel>)> {
    let [a, b, c, d] = k;
    let stages = || {
        vec![
            Stage::new("pack", 0.5e9 + 4e9 * a, (1.0 + 9.0 * b) * US).unwrap(),
            Stage::new("wire", 0.2e9 + 2e9 * c, (1.0 + 20.0 * d) * US).unwrap(),
        ]
    };
    // g up to 4 (L + 2o): a sender may be slower than the network; the round forms space a
    // process's sends max(T, I) (scatter_allgather_pays_the_gap_between_phases)
    let logp = LogP::new(
        (1.0 + 50.0 * a) * US,
        10.0 * b * US,
        4.0 * c * (1.0 + 50.0 * a + 20.0 * b) * US,
        64,
    )
    .unwrap();
    let loggp = LogGP::new(
        (1.0 + 50.0 * a) * US,
        10.0 * b * US,
        10.0 * c * US,
        0.01 * d * US,
    )
    .unwrap();
    let plogp = PLogP::new(
        (1.0 + 20.0 * a) * US,
        Table1D::new(vec![1.0, 65536.0], vec![b * US, (b + 20.0 * c) * US]).unwrap(),
        Table1D::linear(c * US, 0.001 * d * US).unwrap(),
        // concave (slopes fall, start >= 0): g(m) / m never grows, so k pieces of m / k
        // cost at least one message of m
        Table1D::new(
            vec![1.0, 4096.0, 262144.0],
            vec![
                1.0 * US,
                3.0 * US,
                3.0 * US + 258048.0 * (2.0 * US / 4095.0) * (0.2 + 0.8 * d),
            ],
        )
        .unwrap(),
        64,
    )
    .unwrap();
    let memory = MemoryLogP::new(
        Table1D::new(vec![64.0, 1024.0, 65536.0], vec![2e-9, 1e-9, 0.8e-9]).unwrap(),
        None,
        8,
        8,
    )
    .unwrap();
    vec![
        ("logp", Box::new(logp) as Box<dyn CommModel>),
        ("loggp", Box::new(loggp)),
        ("pram", Box::new(Pram::new((1.0 + 10.0 * a) * US).unwrap())),
        ("plogp", Box::new(plogp)),
        ("memory logp", Box::new(memory)),
        (
            "mlines",
            Box::new(
                MlinesModel::new((1.0 + 10.0 * a) * US, 1e-9 * (1.0 + b), 20e-9 * c, 64).unwrap(),
            ),
        ),
        (
            "sequential copies",
            Box::new(CopyTransfer::new(stages(), Composition::Sequential, 8).unwrap()),
        ),
        (
            "pipelined copies",
            Box::new(CopyTransfer::new(stages(), Composition::Pipelined, 8).unwrap()),
        ),
        // log_n P's network hop bundles L with the (m - 1) max(g, o) injection: with
        // max(g, o) > L, k messages of m / k words undercut one of m words by (k - 1)
        // (max(g, o) - L) (see the conversion's docs), so the drawn o and g stay <= L here
        (
            "lognp of logp",
            Box::new(LogNP::from(
                LogP::new(
                    (1.0 + 50.0 * a) * US,
                    b * (1.0 + 50.0 * a) * US,
                    c * (1.0 + 50.0 * a) * US,
                    64,
                )
                .unwrap(),
            )),
        ),
        (
            "loggpo",
            Box::new(
                LogGpo::new(
                    (1.0 + 20.0 * a) * US,
                    0.01 * b * US,
                    16384,
                    Progress::Independent,
                    Mechanism::T,
                    Mechanism::Rta,
                    c * 5.0 * US,
                    Table1D::linear((1.0 + d) * US, 0.001 * c * US).unwrap(),
                    Table1D::linear(0.0, 0.002 * d * US).unwrap(),
                )
                .unwrap(),
            ),
        ),
        ("titan log3p", Box::new(presets::titan_log3p())),
        (
            "lognp of titan",
            Box::new(LogNP::from(presets::titan_log3p())),
        ),
        ("mpich2/tcp", Box::new(presets::mpich2_tcp())),
        ("nmpi/sci", Box::new(presets::nmpi_sci())),
        ("open mpi/openib", Box::new(presets::open_mpi_openib())),
        (
            "one protocol",
            Box::new(Protocols::single(
                LogGP::new(5.0 * US, 1.0 * US, 2.0 * US, 0.001 * US).unwrap(),
            )),
        ),
    ]
}

/// Every algorithm of every collective whose message must cross one link whole.
fn costs(model: &dyn CommModel, problem: &Problem, segment: u64) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    let mut push = |label: String, cost: Result<f64, commcost::collectives::CollectiveError>| {
        out.push((label, cost.expect("valid problem")));
    };
    for a in [
        Bcast::Linear,
        Bcast::Binomial,
        Bcast::ScatterAllgather,
        Bcast::Pipelined { segment },
        Bcast::Pipelined {
            segment: Bcast::best_segment(model, problem),
        },
    ] {
        push(format!("broadcast {}", a.label()), a.cost(model, problem));
    }
    for a in Scatter::ALL {
        push(format!("scatter {}", a.label()), a.cost(model, problem));
    }
    for a in Gather::ALL {
        push(format!("gather {}", a.label()), a.cost(model, problem));
    }
    for a in Reduce::ALL {
        push(format!("reduce {}", a.label()), a.cost(model, problem));
    }
    for a in Allreduce::ALL {
        push(format!("allreduce {}", a.label()), a.cost(model, problem));
    }
    for a in Allgather::ALL {
        push(format!("allgather {}", a.label()), a.cost(model, problem));
    }
    for a in Alltoall::ALL {
        push(format!("alltoall {}", a.label()), a.cost(model, problem));
    }
    for a in Scan::ALL {
        push(format!("scan {}", a.label()), a.cost(model, problem));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn no_collective_beats_one_message(
        k in prop::array::uniform4(0.0f64..1.0),
        processes in 2u64..=1024,
        bytes in 1u64..=(1 << 22),
        segment in 1u64..=(1 << 20),
    ) {
        let problem = Problem::new(processes, Message::contiguous(bytes));
        for (name, model) in every_model(k) {
            let one = model.p2p(&problem.message);
            for (label, cost) in costs(model.as_ref(), &problem, segment) {
                prop_assert!(
                    cost >= one * (1.0 - 1e-9),
                    "{name}, P = {processes}, {bytes} B: {label} costs {cost:e} s < one message {one:e} s"
                );
            }
        }
    }
}

/// The case that showed the problem: a pipelined broadcast of 1 MiB to 64 ranks on a
/// copy-transfer chain cost less than one 1 MiB message while its `send_interval` was 0.
#[test]
fn pipelined_broadcast_of_copies_is_not_free() {
    let stages = vec![
        Stage::new("pack", 2e9, 1e-6).unwrap(),
        Stage::new("wire", 1e9, 5e-6).unwrap(),
    ];
    for composition in [Composition::Sequential, Composition::Pipelined] {
        let model = CopyTransfer::new(stages.clone(), composition, 8).unwrap();
        let problem = Problem::new(64, Message::contiguous(1 << 20));
        let one = model.p2p(&problem.message);
        let segment = Bcast::best_segment(&model, &problem);
        let cost = Bcast::Pipelined { segment }.cost(&model, &problem).unwrap();
        assert!(cost >= one, "{composition:?}: {cost} < {one}");
    }
}

/// The case that showed a gap in the collective formulas: with LogP's word staircase
/// (`L = 1 µs`, `o = 0`, `g = 4.66 µs`, 64-byte words, `P = 2`) two 1-word messages cost
/// `2 L = 2 µs` while the 2-word message costs `L + g = 5.66 µs`; the root's second send must
/// wait `g` after its first (LogP, Culler et al. 1993). The van de Geijn broadcast therefore
/// spaces the root's last scatter send and its first allgather send by `max(T, I)`, as every
/// round-based form now spaces a process's consecutive sends.
#[test]
fn scatter_allgather_pays_the_gap_between_phases() {
    let logp = LogP::new(1e-6, 0.0, 0.466358186832707 * 10.0 * US, 64).unwrap();
    let problem = Problem::new(2, Message::contiguous(65));
    let cost = Bcast::ScatterAllgather.cost(&logp, &problem).unwrap();
    assert!(cost >= logp.p2p(&problem.message));
}
