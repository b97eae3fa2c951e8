//! Schedules of Open MPI's `coll_tuned` algorithms ([`collectives::ompi`](crate::collectives::ompi)),
//! for any number of processes.
//!
//! Each rank's operations are written as the straight-line program Open MPI 4.1's
//! `ompi/mca/coll/base/coll_base_*.c` runs: a blocking call (send, receive, send-receive,
//! the operator) `requires` everything the rank did before; a non-blocking call (`isend`,
//! `irecv`) only what came before it, and a later `wait` makes the following calls require it.
//! Trees are built as `coll_base_topo.c` builds them (chain, level-order binary tree, binomial
//! tree, k-nomial tree, in-order binary tree). Message sizes are those of the closed forms
//! (every segment priced at the segment size, the blocks of a scatter at `⌈m/P⌉` bytes), so that
//! a schedule and its closed form describe the same messages. Root is rank 0, except for the
//! in-order binary reduce, whose tree is rooted at rank `P - 1` as Open MPI builds it (for
//! another root Open MPI sends the result on, one more `T(m)` that neither side prices).
//! Rabenseifner's algorithms keep the even ranks of the folded pairs, as Open MPI does, so the
//! reduce gathers to rank 0.
//!
//! The structure of each schedule, and how its simulation relates to the closed form, is
//! described on [`ToSchedule`](super::ToSchedule) and in `docs/SIMULATOR.md`.

mod allgather;
mod allreduce;
mod alltoall;
mod barrier;
mod bcast;
mod gather;
mod reduce;
mod reduce_scatter;
mod scatter;
mod tree;

use tree::Tree;

use super::check_ranks;
use super::fold::{fold_even, unfold_even};
use super::writer::Calls;
use crate::collectives::CollectiveError;
use crate::collectives::Problem;
use crate::sim::SimError;
use crate::sim::op::{Dependency, OpId, OpKind};
use crate::sim::schedule::Schedule;
use crate::util::bits::{ceil_log2, floor_log2, lowbit};

/// `(s, q)`: the segment size and count of the closed forms (`s = m` when the segment is 0 or
/// at least `m`).
fn segments(m: u64, segment: u64) -> (u64, u64) {
    let s = if segment == 0 || segment >= m {
        m
    } else {
        segment
    };
    let q = if s == 0 { 1 } else { m.div_ceil(s) };
    (s, q)
}

/// `ompi_coll_base_bcast_intra_generic` over `tree`, `q` segments of `s` bytes: the root
/// posts each segment to all children and waits; an inner process keeps one receive ahead,
/// forwards a segment to all children and waits for those sends; a leaf keeps one receive
/// ahead.
fn bcast_generic(w: &mut Calls<'_>, tree: &Tree, r: u64, s: u64, q: u64, tag: u32) {
    let kids = &tree.children[r as usize];
    if r == tree.root {
        for _ in 0..q {
            for &c in kids {
                w.isend(c, tag, s);
            }
            w.waitall();
        }
        return;
    }
    let parent = tree.parent[r as usize];
    let mut ahead = w.irecv(parent, tag, s);
    for seg in 0..q {
        let next = (seg + 1 < q).then(|| w.irecv(parent, tag, s));
        w.wait(ahead);
        for &c in kids {
            w.isend(c, tag, s);
        }
        w.waitall();
        if let Some(n) = next {
            ahead = n;
        }
    }
}

/// The ops per rank of a segmented tree: at most `q (2 + 2 k)` for `k` children.
fn tree_ops(tree: &Tree, q: u64) -> u64 {
    q.saturating_mul(2 + 2 * tree.max_children())
        .saturating_add(4)
}

/// `ompi_coll_base_reduce_generic` over `tree`: a process with children posts the receive of
/// segment `j` from child `i`, waits for the previous receive and reduces it; after the last
/// child of a segment it reduces and sends the segment to its parent (blocking). A leaf sends
/// its `q` segments with blocking sends.
fn reduce_generic(w: &mut Calls<'_>, tree: &Tree, r: u64, s: u64, q: u64) {
    let kids = tree.children[r as usize].clone();
    let is_root = r == tree.root;
    let parent = tree.parent[r as usize];
    if kids.is_empty() {
        if !is_root {
            for _ in 0..q {
                w.send(parent, 0, s);
            }
        }
        return;
    }
    let mut previous: Option<OpId> = None;
    'segments: for seg in 0..=q {
        for (i, &c) in kids.iter().enumerate() {
            let posted = (seg < q).then(|| w.irecv(c, 0, s));
            if let Some(h) = previous {
                w.wait(h);
            }
            if i > 0 {
                w.op(s);
            } else if seg > 0 {
                w.op(s);
                if !is_root {
                    w.send(parent, 0, s);
                }
                if seg == q {
                    break 'segments;
                }
            }
            previous = posted;
        }
    }
}

/// The root posts a send of `bytes` to every other rank (`isend`s, one wait); the others
/// receive.
fn linear_bcast(w: &mut Calls<'_>, r: u64, p: u64, tag: u32, bytes: u64) {
    if r == 0 {
        for peer in 1..p {
            w.isend(peer, tag, bytes);
        }
        w.waitall();
    } else {
        w.recv(0, tag, bytes);
    }
}

/// `ompi_coll_base_reduce_intra_basic_linear` to rank 0: the root receives from `P - 1`, then
/// from `P - 2 … 1`, reducing each, and reduces its own data; the others send.
fn linear_reduce(w: &mut Calls<'_>, r: u64, p: u64, tag: u32, m: u64) {
    if r == 0 {
        w.recv(p - 1, tag, m);
        for peer in (1..p - 1).rev() {
            w.recv(peer, tag, m);
            w.op(m);
        }
        w.op(m);
    } else {
        w.send(0, tag, m);
    }
}

/// The binomial scatter of `c`-byte blocks (`coll_base_bcast.c`, scatter_allgather): rank `r`
/// receives its subtree's blocks from `r - lowbit(r)`, then sends to `r + mask` for the
/// masks below, the largest first; the edge into `child` carries `c min(lowbit(child),
/// P - child)` bytes (the closed form's sizes).
fn binomial_scatter(w: &mut Calls<'_>, r: u64, p: u64, c: u64, tag: u32) {
    let bytes = |child: u64| c.saturating_mul(lowbit(child).min(p - child));
    let top = if r == 0 {
        1u64 << ceil_log2(p)
    } else {
        w.recv(r - lowbit(r), tag, bytes(r));
        lowbit(r)
    };
    let mut mask = top >> 1;
    while mask > 0 {
        if r + mask < p {
            w.send(r + mask, tag, bytes(r + mask));
        }
        mask >>= 1;
    }
}

/// `P - 1` ring steps (send right, receive left) of `bytes`, then `op(bytes)` when `reduce`.
fn ring(w: &mut Calls<'_>, r: u64, p: u64, bytes: u64, tag: u32, reduce: bool) {
    let right = (r + 1) % p;
    let left = (r + p - 1) % p;
    for _ in 1..p {
        w.sendrecv(right, left, tag, bytes, bytes);
        if reduce {
            w.op(bytes);
        }
    }
}

/// The reduce-scatter of Rabenseifner's algorithm (Open MPI: recursive vector halving,
/// distance doubling): at `mask = 2^i` exchange `⌈m/2^(i+1)⌉` bytes with `newrank ^ mask` and
/// reduce them.
fn rabenseifner_halving(w: &mut Calls<'_>, rem: u64, pp: u64, new: u64, m: u64, tag: u32) {
    let mut mask = 1u64;
    let mut k = 1;
    while mask < pp {
        let peer = unfold_even(rem, new ^ mask);
        let piece = m.div_ceil(1u64 << k);
        w.sendrecv(peer, peer, tag, piece, piece);
        w.op(piece);
        mask <<= 1;
        k += 1;
    }
}

/// The allgather of Rabenseifner's allreduce (recursive vector doubling, distance halving):
/// the rounds of [`rabenseifner_halving`] in reverse, without the operator.
fn rabenseifner_doubling(w: &mut Calls<'_>, rem: u64, pp: u64, new: u64, m: u64, tag: u32) {
    let mut mask = pp >> 1;
    let mut k = floor_log2(pp);
    while mask > 0 {
        let peer = unfold_even(rem, new ^ mask);
        let piece = m.div_ceil(1u64 << k);
        w.sendrecv(peer, peer, tag, piece, piece);
        mask >>= 1;
        k = k.saturating_sub(1);
    }
}

/// Rank by rank, the calls of `first`, then those of `second`: the MPI collectives Open MPI's
/// composed algorithms call one after the other (`collectives::ompi::inner`). Both schedules'
/// operations in their order; `second`'s tags moved past `first`'s (each collective matches
/// its own messages, as Open MPI's per-collective tags keep them apart); and every operation
/// that begins a rank's part of `second` (requiring nothing) requires every operation that
/// ends the rank's part of `first` (nothing requires it): a rank starts its second call when
/// its first has returned.
fn sequence(first: &Schedule, second: &Schedule) -> Result<Schedule, SimError> {
    let p = first.ranks();
    let total = (first.len() + second.len()) as u64;
    let mut b = super::sized_builder(p, total.div_ceil(p.max(1)))?;
    let shift = first.len() as u32;
    let tags = (0..shift)
        .filter_map(|i| first.tag(OpId(i)))
        .max()
        .map_or(0, |t| t.saturating_add(1));
    let mut ends: Vec<Vec<OpId>> = vec![Vec::new(); p as usize];
    let mut begins = vec![true; second.len()];
    for (part, offset, tag_shift) in [(first, 0, 0), (second, shift, tags)] {
        let n = part.len() as u32;
        for i in 0..n {
            let op = OpId(i);
            let rank = part.rank(op).expect("an operation of the schedule");
            match (part.message(op), part.peer(op), part.kind(op)) {
                (Some(msg), Some(peer), Some(OpKind::Send)) => {
                    b.send_message(rank, peer, part.tag(op).unwrap_or(0) + tag_shift, msg)
                }
                (Some(msg), Some(peer), _) => {
                    b.recv_message(rank, peer, part.tag(op).unwrap_or(0) + tag_shift, msg)
                }
                _ => b.calc(rank, part.calc_seconds(op).unwrap_or(0.0)),
            };
        }
        for i in 0..n {
            let mut ends_rank = true;
            for (d, kind) in part.dependents(OpId(i)) {
                b.depend(OpId(d.0 + offset), OpId(i + offset), kind);
                if offset > 0 {
                    begins[d.index()] = false;
                } else if kind == Dependency::Requires {
                    ends_rank = false;
                }
            }
            if offset == 0 && ends_rank {
                let rank = first.rank(OpId(i)).expect("an operation of the schedule");
                ends[rank as usize].push(OpId(i));
            }
        }
    }
    for (i, _) in begins.iter().enumerate().filter(|(_, b)| **b) {
        let op = OpId(i as u32);
        let rank = second.rank(op).expect("an operation of the schedule");
        for &end in &ends[rank as usize] {
            b.requires(OpId(op.0 + shift), end);
        }
    }
    b.build()
}

/// The `two_proc` algorithms (allgather, alltoall, barrier) exist for at most 2 processes.
fn two_proc_only(p: u64) -> Result<(), SimError> {
    if p > 2 {
        return Err(CollectiveError::NotApplicable {
            algorithm: "two-proc",
            processes: p,
            requirement: "exactly 2 processes",
        }
        .into());
    }
    Ok(())
}

/// The `two_proc` algorithms of allgather and alltoall: on 2 processes one `MPI_Sendrecv` of
/// `m` bytes each way (on 1 process nothing).
fn two_proc_exchange(problem: &Problem, m: u64) -> Result<Schedule, SimError> {
    let p = problem.processes;
    let mut w = Calls::new(problem, 2)?;
    for r in 0..p {
        w.rank(r);
        if p == 2 {
            w.sendrecv(1 - r, 1 - r, 0, m, m);
        }
    }
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::build::fold::{fold, unfold};

    /// Children lists as `coll_base_topo.c` draws them.
    #[test]
    fn trees_as_open_mpi_draws_them() {
        // bmtree, size 8: 0 → 1 2 4, 1 → 3 5, 2 → 6, 3 → 7
        let t = Tree::binomial(8);
        assert_eq!(t.children[0], vec![1, 2, 4]);
        assert_eq!(t.children[1], vec![3, 5]);
        assert_eq!(t.children[3], vec![7]);
        // in-order bmtree, size 8 (coll_base_topo.c's drawing): 0 → 1 2 4, 2 → 3, 4 → 5 6, 6 → 7
        let t = Tree::in_order_binomial(8);
        assert_eq!(t.children[0], vec![1, 2, 4]);
        assert!(t.children[1].is_empty());
        assert_eq!(t.children[2], vec![3]);
        assert_eq!(t.children[4], vec![5, 6]);
        assert_eq!(t.children[6], vec![7]);
        // k-nomial, size 10, radix 3: 0 → 9 3 6 1 2, 3 → 4 5, 6 → 7 8
        let t = Tree::knomial(3, 10);
        assert_eq!(t.children[0], vec![9, 3, 6, 1, 2]);
        assert_eq!(t.children[3], vec![4, 5]);
        assert_eq!(t.children[6], vec![7, 8]);
        // radix 4: 0 → 4 8 1 2 3, 4 → 5 6 7, 8 → 9
        let t = Tree::knomial(4, 10);
        assert_eq!(t.children[0], vec![4, 8, 1, 2, 3]);
        assert_eq!(t.children[4], vec![5, 6, 7]);
        assert_eq!(t.children[8], vec![9]);
        // binary, size 7: 0 → 1 2, 1 → 3 5, 2 → 4 6
        let t = Tree::binary(7);
        assert_eq!(t.children[1], vec![3, 5]);
        assert_eq!(t.children[2], vec![4, 6]);
        // in-order binary, size 9: 8 → 7 3, 7 → 6 5, 5 → 4, 3 → 2 1, 1 → 0
        let t = Tree::in_order_binary(9);
        assert_eq!(t.root, 8);
        assert_eq!(t.children[8], vec![7, 3]);
        assert_eq!(t.children[7], vec![6, 5]);
        assert_eq!(t.children[5], vec![4]);
        assert!(t.children[6].is_empty());
        assert_eq!(t.children[3], vec![2, 1]);
        assert_eq!(t.children[1], vec![0]);
        // chain, size 8, fanout 3: (P-1) mod f = 1 longer chain first: 1-2-3, 4-5, 6-7
        let t = Tree::chain(3, 8);
        assert_eq!(t.children[0], vec![1, 4, 6]);
        assert_eq!(t.children[3], Vec::<u64>::new());
        assert_eq!(t.children[4], vec![5]);
    }

    #[test]
    fn both_foldings_pair_the_extra_ranks() {
        for p in 1..100u64 {
            for (fold_fn, unfold_fn) in [
                (
                    fold as fn(u64, u64) -> (u64, u64, Option<u64>),
                    unfold as fn(u64, u64) -> u64,
                ),
                (fold_even, unfold_even),
            ] {
                let (rem, pp, _) = fold_fn(p, 0);
                assert_eq!(rem + pp, p);
                let mut news: Vec<u64> = (0..p).filter_map(|r| fold_fn(p, r).2).collect();
                news.sort_unstable();
                assert_eq!(news, (0..pp).collect::<Vec<_>>());
                for r in 0..p {
                    if let Some(n) = fold_fn(p, r).2 {
                        assert_eq!(unfold_fn(rem, n), r);
                    }
                }
            }
            // Open MPI's Rabenseifner keeps rank 0
            assert_eq!(fold_even(p, 0).2, Some(0));
        }
    }

    #[test]
    fn every_tree_spans_every_process_once() {
        for p in 1..80u64 {
            let trees = [
                Tree::chain(4, p),
                Tree::chain(1, p),
                Tree::binary(p),
                Tree::binomial(p),
                Tree::in_order_binomial(p),
                Tree::knomial(4, p),
                Tree::knomial(3, p),
                Tree::in_order_binary(p),
            ];
            for t in trees {
                let mut seen = vec![0u32; p as usize];
                for list in &t.children {
                    for &c in list {
                        seen[c as usize] += 1;
                    }
                }
                seen[t.root as usize] += 1;
                assert!(seen.iter().all(|&n| n == 1), "p {p}: {seen:?}");
            }
        }
    }
}
