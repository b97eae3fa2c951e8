//! The two-level platform (`Simulator::simulate_two_level`): its degenerate cases are the flat
//! simulator bit for bit — every rank on one node is the intra-node model, one rank per node
//! the inter-node model, with every platform term — and a node's ranks share its link.

use commcost::collectives::{Allgather, Allreduce, Alltoall, Bcast, Problem};
use commcost::sim::{
    NodeMap, RendezvousCompletion, Schedule, ScheduleBuilder, SimError, SimOptions, Simulator,
    ToSchedule, TwoLevel, simulate,
};
use commcost::{CommModel, LogGP, Message};

fn schedules(p: u64) -> Vec<Schedule> {
    let mut out = Vec::new();
    for bytes in [8, 4096, 1 << 20] {
        let problem = Problem::new(p, Message::contiguous(bytes));
        out.push(Allreduce::RecursiveDoubling.schedule(&problem).unwrap());
        out.push(Allreduce::Ring.schedule(&problem).unwrap());
        out.push(Allgather::Ring.schedule(&problem).unwrap());
        out.push(Alltoall::PairwiseExchange.schedule(&problem).unwrap());
        out.push(Bcast::Binomial.schedule(&problem).unwrap());
        out.push(Bcast::ScatterAllgather.schedule(&problem).unwrap());
    }
    out
}

/// The platform terms one at a time and together.
fn options() -> Vec<SimOptions> {
    let plain = SimOptions::default();
    vec![
        plain,
        SimOptions {
            rendezvous_above: Some(4096),
            ..plain
        },
        SimOptions {
            rendezvous_above: Some(4096),
            rendezvous_completion: RendezvousCompletion::AtHandshake,
            ack_behind_sends: true,
            ..plain
        },
        SimOptions {
            cores: Some(2),
            link_burst: Some(9000),
            critical_path: true,
            ..plain
        },
    ]
}

#[test]
fn one_node_is_the_intra_node_model_and_one_rank_per_node_the_inter_node_model() {
    let intra = LogGP::new(0.3e-6, 0.2e-6, 0.1e-6, 0.05e-9).unwrap();
    let inter = LogGP::new(20e-6, 2e-6, 5e-6, 8e-9).unwrap();
    let p = 8u32;
    let one_node = NodeMap::block(1, p).unwrap();
    let spread = NodeMap::round_robin(p, 1).unwrap();
    let mut simulator = Simulator::new();
    for schedule in schedules(u64::from(p)) {
        for o in options() {
            let flat_intra = simulate(&schedule, &intra, &o).unwrap();
            // every rank on one node: the inter-node model is never used
            let platform = TwoLevel {
                nodes: &one_node,
                inter: &inter,
                inter_rendezvous_above: Some(1),
            };
            let shaped = SimOptions {
                // (on a two-level platform the shaped link is the nodes')
                link_burst: None,
                ..o
            };
            assert_eq!(
                simulator
                    .simulate_two_level(&schedule, &intra, platform, &shaped)
                    .unwrap(),
                simulate(&schedule, &intra, &shaped).unwrap(),
                "one node, {o:?}"
            );
            // one rank per node: every message is the inter-node model's, on the nodes' NICs
            let platform = TwoLevel {
                nodes: &spread,
                inter: &inter,
                inter_rendezvous_above: o.rendezvous_above,
            };
            let flat_inter = simulate(&schedule, &inter, &o).unwrap();
            assert_eq!(
                simulator
                    .simulate_two_level(&schedule, &intra, platform, &o)
                    .unwrap(),
                flat_inter,
                "one rank per node, {o:?}"
            );
            assert!(flat_intra.makespan < flat_inter.makespan);
        }
    }
}

#[test]
fn a_nodes_ranks_take_turns_on_its_link_in_each_direction() {
    let intra = LogGP::new(0.3e-6, 0.2e-6, 0.1e-6, 0.05e-9).unwrap();
    let inter = LogGP::new(20e-6, 2e-6, 5e-6, 8e-9).unwrap();
    let m = Message::contiguous(4001);
    let (t, i) = (inter.p2p(&m), inter.send_interval(&m));
    // node 0: ranks 0, 1, 2; node 1: ranks 3, 4, 5; each of node 0's ranks sends to one of
    // node 1's at time 0
    let nodes = NodeMap::block(2, 3).unwrap();
    let mut b = ScheduleBuilder::new(6);
    for r in 0..3 {
        b.send(r, r + 3, 0, 4001);
        b.recv(r + 3, r, 0, 4001);
    }
    let schedule = b.build().unwrap();
    let platform = TwoLevel {
        nodes: &nodes,
        inter: &inter,
        inter_rendezvous_above: None,
    };
    let run = Simulator::new()
        .simulate_two_level(&schedule, &intra, platform, &SimOptions::default())
        .unwrap();
    // the sends leave I apart, in rank order, and arrive T after they leave; the receiving
    // node's NIC takes them as they come (its windows do not overlap)
    for k in 0..3 {
        let want = k as f64 * i + t;
        assert!(
            (run.rank_finish[k + 3] - want).abs() < 1e-15,
            "rank {}: {} against {want}",
            k + 3,
            run.rank_finish[k + 3]
        );
    }
    // placed round robin, ranks 0, 2, 4 are on node 0: the same exchange crosses in both
    // directions and inside nodes, and costs less
    let round_robin = NodeMap::round_robin(2, 3).unwrap();
    let platform = TwoLevel {
        nodes: &round_robin,
        ..platform
    };
    let other = Simulator::new()
        .simulate_two_level(&schedule, &intra, platform, &SimOptions::default())
        .unwrap();
    assert!(other.makespan < run.makespan);
}

#[test]
fn a_node_map_of_another_size_is_an_error_naming_it() {
    let model = LogGP::new(1e-6, 1e-6, 1e-6, 1e-9).unwrap();
    let schedule = Allreduce::Ring
        .schedule(&Problem::new(4, Message::contiguous(64)))
        .unwrap();
    let nodes = NodeMap::block(2, 3).unwrap();
    let platform = TwoLevel {
        nodes: &nodes,
        inter: &model,
        inter_rendezvous_above: None,
    };
    let e = Simulator::new()
        .simulate_two_level(&schedule, &model, platform, &SimOptions::default())
        .unwrap_err();
    assert!(
        matches!(e, SimError::InvalidOption { name: "nodes", .. }),
        "{e}"
    );
}

/// A rendezvous message over a node's shared link holds the link from when its data leaves,
/// not from its send: Open MPI's linear reduce on 2 nodes of 2 ranks, root 0 receiving rank
/// 3's block first and rank 2's after it (both on node 1, both sending at time 0). Rank 3's data
/// leaves at once (its receive is posted) and arrives after `T = p2p(m)`; rank 2's request
/// waits until the root posts its receive at `T` (its data has not held the link meanwhile),
/// then crosses in `T`: `2 T`. Held from the sends, rank 2's send (first in rank order) would
/// keep the link for its interval while its receive is not even posted: `I + 2 T`.
#[test]
fn a_rendezvous_message_holds_a_shared_link_from_when_its_data_leaves() {
    let intra = LogGP::new(0.3e-6, 0.2e-6, 0.1e-6, 0.05e-9).unwrap();
    let inter = LogGP::new(10e-6, 1e-6, 2e-6, 1e-9).unwrap();
    let bytes = 1_000_000;
    let t = inter.p2p(&Message::contiguous(bytes));
    let nodes = NodeMap::block(2, 2).unwrap();
    let mut b = ScheduleBuilder::new(4);
    b.send(2, 0, 0, bytes);
    b.send(3, 0, 0, bytes);
    let first = b.recv(0, 3, 0, bytes);
    let second = b.recv(0, 2, 0, bytes);
    b.requires(second, first);
    let schedule = b.build().unwrap();
    let platform = TwoLevel {
        nodes: &nodes,
        inter: &inter,
        inter_rendezvous_above: Some(65536),
    };
    let run = Simulator::new()
        .simulate_two_level(&schedule, &intra, platform, &SimOptions::default())
        .unwrap();
    assert!(
        (run.makespan - 2.0 * t).abs() < 1e-12,
        "{} against {}",
        run.makespan,
        2.0 * t
    );
}
