//! Hierarchical collectives (`Hierarchical`, `cost_hierarchical`): hand-derived times on small
//! platforms, the degenerate platforms against the flat algorithm Open MPI would run there,
//! pipelining, and the errors.

use commcost::collectives::ompi::{self, fixed_algorithm};
use commcost::collectives::{Collective, Family, Problem};
use commcost::sim::{
    Hierarchical, NodeMap, SimError, SimLimits, SimOptions, TwoLevel, cost_hierarchical,
    cost_on_nodes_in,
};
use commcost::{CommModel, LogGP, Message};

fn shm() -> LogGP {
    LogGP::new(0.5e-6, 0.1e-6, 0.2e-6, 0.0).unwrap()
}

fn net() -> LogGP {
    LogGP::new(10e-6, 1e-6, 2e-6, 0.0).unwrap()
}

fn cost(
    intra: &dyn CommModel,
    inter: &dyn CommModel,
    nodes: &NodeMap,
    c: Collective,
    h: Hierarchical,
    bytes: u64,
) -> Result<f64, SimError> {
    let platform = TwoLevel {
        nodes,
        inter,
        inter_rendezvous_above: None,
    };
    let problem = Problem::new(u64::from(nodes.ranks()), Message::contiguous(bytes));
    cost_hierarchical(
        intra,
        platform,
        c,
        h,
        &problem,
        SimLimits::default(),
        &SimOptions::default(),
    )
}

/// 2 nodes of 2 ranks, 8 bytes: `T_net = o + L + o = 12` µs between the leaders, `T_shm =
/// 0.7` µs inside a node.
#[test]
fn two_nodes_of_two_ranks_by_hand() {
    let nodes = NodeMap::block(2, 2).unwrap();
    // bcast: 0 → 2 arrives at 12 µs, 2 → 3 at 12.7 µs; the same for han (2 leaders: linear)
    for h in Hierarchical::ALL {
        let t = cost(&shm(), &net(), &nodes, Collective::Bcast, h, 8).unwrap();
        assert!((t - 12.7e-6).abs() < 1e-12, "{h}: {t}");
    }
    // reduce: 1 → 0 and 3 → 2 done at 0.7 µs, then 2 → 0 at 0.7 + 12 µs
    for h in Hierarchical::ALL {
        let t = cost(&shm(), &net(), &nodes, Collective::Reduce, h, 8).unwrap();
        assert!((t - 12.7e-6).abs() < 1e-12, "{h}: {t}");
    }
    // gather of 8 bytes per rank: the node gathers as the reduce, then 2 sends 16 bytes to 0
    // (G = 0: the same time)
    for h in Hierarchical::ALL {
        let t = cost(&shm(), &net(), &nodes, Collective::Gather, h, 8).unwrap();
        assert!((t - 12.7e-6).abs() < 1e-12, "{h}: {t}");
    }
    // round robin (nodes 0, 1 | 0, 1): the leaders are ranks 0 and 1; node 0 holds 0 and 2
    let rr = NodeMap::round_robin(2, 2).unwrap();
    let t = cost(
        &shm(),
        &net(),
        &rr,
        Collective::Bcast,
        Hierarchical::Leaders,
        8,
    )
    .unwrap();
    assert!((t - 12.7e-6).abs() < 1e-12, "{t}");
}

/// On one node the composition is the node's call alone, on one rank per node the leaders'
/// call alone: Open MPI's fixed decision for that communicator, simulated directly.
#[test]
fn degenerate_platforms_are_the_fixed_decision() {
    let intra = LogGP::new(0.4e-6, 0.3e-6, 0.2e-6, 0.1e-9).unwrap();
    let inter = LogGP::new(15e-6, 2e-6, 4e-6, 8e-9).unwrap();
    for nodes in [NodeMap::block(1, 4).unwrap(), NodeMap::block(4, 1).unwrap()] {
        for bytes in [8u64, 65536, 1 << 20] {
            let fixed: Vec<(Collective, String)> = vec![
                (
                    Collective::Bcast,
                    fixed_algorithm::<ompi::Bcast>(4, bytes, true)
                        .unwrap()
                        .to_string(),
                ),
                (
                    Collective::Reduce,
                    fixed_algorithm::<ompi::Reduce>(4, bytes, true)
                        .unwrap()
                        .to_string(),
                ),
                (
                    Collective::Gather,
                    fixed_algorithm::<ompi::Gather>(4, bytes, true)
                        .unwrap()
                        .to_string(),
                ),
                (
                    Collective::Scatter,
                    fixed_algorithm::<ompi::Scatter>(4, bytes, true)
                        .unwrap()
                        .to_string(),
                ),
            ];
            for (c, name) in fixed {
                let platform = TwoLevel {
                    nodes: &nodes,
                    inter: &inter,
                    inter_rendezvous_above: None,
                };
                let direct = cost_on_nodes_in(
                    &intra,
                    platform,
                    Family::Ompi,
                    c,
                    &name,
                    &Problem::new(4, Message::contiguous(bytes)),
                    SimLimits::default(),
                    &SimOptions::default(),
                )
                .unwrap()
                .cost;
                let composed =
                    cost(&intra, &inter, &nodes, c, Hierarchical::Leaders, bytes).unwrap();
                assert!(
                    (composed - direct).abs() <= 1e-12 * direct.max(1e-9),
                    "{c} {bytes} B on {} nodes: {composed} vs {name} {direct}",
                    nodes.nodes()
                );
            }
        }
    }
}

/// `han` pipelines: with a slow link and a fast node, a 1 MiB broadcast costs about the link's
/// time for the message plus one segment's node broadcast, not both whole; never less than the
/// leaders' message.
#[test]
fn han_pipelines_its_segments() {
    let intra = LogGP::new(0.4e-6, 0.3e-6, 0.2e-6, 0.2e-9).unwrap();
    let inter = LogGP::new(20e-6, 2e-6, 4e-6, 8e-9).unwrap();
    let nodes = NodeMap::block(2, 4).unwrap();
    let m = 1u64 << 20;
    let han = cost(
        &intra,
        &inter,
        &nodes,
        Collective::Bcast,
        Hierarchical::HAN,
        m,
    )
    .unwrap();
    let leaders = cost(
        &intra,
        &inter,
        &nodes,
        Collective::Bcast,
        Hierarchical::Leaders,
        m,
    )
    .unwrap();
    let one_message = inter.p2p(&Message::contiguous(m));
    assert!(han >= one_message, "{han} < {one_message}");
    assert!(
        han < leaders,
        "han {han} not below the unsegmented {leaders}"
    );
    // the node's share left after the link: at most a few segments' worth
    let node_whole = leaders - one_message;
    assert!(
        han - one_message < 0.5 * node_whole,
        "{han} {leaders} {one_message}"
    );
    // allreduce and reduce are at least their leaders' message too
    for c in [Collective::Reduce, Collective::Allreduce] {
        let t = cost(&intra, &inter, &nodes, c, Hierarchical::HAN, m).unwrap();
        assert!(t >= one_message, "{c}: {t}");
    }
}

/// The leaders' closed form is the simulation where every step is one message per group (2
/// nodes of 2 ranks); `han` has none.
#[test]
fn the_leaders_closed_form_matches_the_simulation_where_exact() {
    let nodes = NodeMap::block(2, 2).unwrap();
    let problem = Problem::new(4, Message::contiguous(8));
    for c in [
        Collective::Bcast,
        Collective::Reduce,
        Collective::Gather,
        Collective::Scatter,
    ] {
        let closed = Hierarchical::Leaders
            .closed_form(c, &shm(), &net(), &nodes, &problem)
            .unwrap();
        let simulated = cost(&shm(), &net(), &nodes, c, Hierarchical::Leaders, 8).unwrap();
        assert!(
            (closed - simulated).abs() < 1e-12,
            "{c}: {closed} vs {simulated}"
        );
    }
    assert!(matches!(
        Hierarchical::HAN.closed_form(Collective::Bcast, &shm(), &net(), &nodes, &problem),
        Err(SimError::InvalidOption {
            name: "hierarchical",
            ..
        })
    ));
    assert!(
        Hierarchical::Leaders
            .closed_form(Collective::Alltoall, &shm(), &net(), &nodes, &problem)
            .is_err()
    );
    // 1024 nodes of 64 ranks: one price per distinct call, at least the leaders' one message
    let big = NodeMap::block(1024, 64).unwrap();
    let t = Hierarchical::Leaders
        .closed_form(
            Collective::Allreduce,
            &shm(),
            &net(),
            &big,
            &Problem::new(1 << 16, Message::contiguous(8)),
        )
        .unwrap();
    assert!(t >= net().p2p(&Message::contiguous(8)), "{t}");
}

#[test]
fn bad_input_is_a_typed_error() {
    let nodes = NodeMap::block(2, 2).unwrap();
    let p = |n: u64| Problem::new(n, Message::contiguous(8));
    // a map of another size
    assert!(matches!(
        Hierarchical::Leaders.schedule(Collective::Bcast, &nodes, &p(8)),
        Err(SimError::InvalidOption { name: "nodes", .. })
    ));
    // gather on nodes of unequal sizes
    let uneven = NodeMap::explicit(vec![0, 0, 1]).unwrap();
    assert!(matches!(
        Hierarchical::Leaders.schedule(Collective::Gather, &uneven, &p(3)),
        Err(SimError::InvalidOption { name: "nodes", .. })
    ));
    // but a bcast is fine there
    assert!(
        Hierarchical::HAN
            .schedule(Collective::Bcast, &uneven, &p(3))
            .is_ok()
    );
    // collectives without a composition
    assert!(matches!(
        Hierarchical::Leaders.schedule(Collective::Alltoall, &nodes, &p(4)),
        Err(SimError::InvalidOption {
            name: "collective",
            ..
        })
    ));
    assert!(
        Hierarchical::HAN
            .schedule(Collective::Allgather, &nodes, &p(4))
            .is_err()
    );
    // segments
    assert!("han:segment=0".parse::<Hierarchical>().is_err());
    assert!("han:segment=x".parse::<Hierarchical>().is_err());
    assert!(matches!(
        Hierarchical::Han { segment: 0 }.schedule(Collective::Bcast, &nodes, &p(4)),
        Err(SimError::InvalidOption {
            name: "segment",
            ..
        })
    ));
    // a schedule beyond the limits
    let tiny = SimLimits {
        max_processes: 1024,
        max_operations: 100,
    };
    let platform = TwoLevel {
        nodes: &nodes,
        inter: &net(),
        inter_rendezvous_above: None,
    };
    let big = Problem::new(4, Message::contiguous(1 << 20));
    assert!(matches!(
        cost_hierarchical(
            &shm(),
            platform,
            Collective::Bcast,
            Hierarchical::Han { segment: 1024 },
            &big,
            tiny,
            &SimOptions::default()
        ),
        Err(SimError::TooLarge { .. })
    ));
    // a segment of one byte on a huge message is refused before anything is built
    let huge = Problem::new(4, Message::contiguous(1 << 40));
    assert!(matches!(
        Hierarchical::Han { segment: 1 }.schedule(Collective::Allreduce, &nodes, &huge),
        Err(SimError::TooLarge { .. })
    ));
}
