//! Communication shapes several textbook collectives share: the root's one-step fan-out, the
//! binomial tree downwards and upwards, and the ring.

use super::writer::Steps;
use crate::collectives::Problem;
use crate::sim::SimError;
use crate::sim::schedule::Schedule;
use crate::util::bits::{ceil_log2, lowbit};

/// The root sends `bytes` to ranks `1..P` in one step; the others receive.
pub(super) fn linear_out(problem: &Problem, bytes: u64) -> Result<Schedule, SimError> {
    let p = problem.processes;
    let mut w = Steps::new(problem, 2)?;
    for r in 0..p {
        w.rank(r);
        if r == 0 {
            for peer in 1..p {
                w.send(peer, 0, bytes);
            }
            w.end_step();
        } else {
            w.recv_step(0, 0, bytes);
        }
    }
    w.finish()
}

/// Binomial tree downwards (broadcast, scatter): receive from the parent, then send to each
/// child, largest subtree first; `bytes(child)` is the size of the edge into `child`.
pub(super) fn binomial_down(w: &mut Steps<'_>, r: u64, p: u64, bytes: impl Fn(u64) -> u64) {
    let top = if r == 0 {
        1u64 << ceil_log2(p)
    } else {
        w.recv_step(r - lowbit(r), 0, bytes(r));
        lowbit(r)
    };
    let mut mask = top >> 1;
    while mask > 0 {
        let child = r + mask;
        if child < p {
            w.send_step(child, 0, bytes(child));
        }
        mask >>= 1;
    }
}

/// The children of `v` in the in-order binomial tree of `p` ranks rooted at rank 0 (Open MPI's
/// `ompi_coll_base_topo_build_in_order_bmtree`; the textbook gather's and reduce's tree): `v +
/// 2^j` below `p` for every `2^j` under `v`'s lowest set bit (every `2^j < p` for the root),
/// smallest subtree first.
pub(super) fn in_order_binomial_children(v: u64, p: u64) -> impl Iterator<Item = u64> {
    let top = if v == 0 { p } else { lowbit(v) };
    (0..u64::BITS)
        .map(|j| 1u64 << j)
        .take_while(move |&mask| mask < top)
        .filter_map(move |mask| v.checked_add(mask).filter(|&child| child < p))
}

/// Binomial tree upwards (gather, reduce): receive from each child
/// ([`in_order_binomial_children`], smallest subtree first), each receive followed by `op(m)`
/// when `reduce`; then send to the parent.
pub(super) fn binomial_up(
    w: &mut Steps<'_>,
    r: u64,
    p: u64,
    bytes: impl Fn(u64) -> u64,
    reduce: bool,
) {
    for child in in_order_binomial_children(r, p) {
        w.recv_step(child, 0, bytes(child));
        if reduce {
            let m = w.m();
            w.op(m);
        }
    }
    if r > 0 {
        w.send_step(r - lowbit(r), 0, bytes(r));
    }
}

/// `P - 1` ring steps of `bytes`: send to the right, receive from the left, then `op(bytes)`
/// when `reduce`.
pub(super) fn ring(w: &mut Steps<'_>, r: u64, p: u64, bytes: u64, tag: u32, reduce: bool) {
    let right = (r + 1) % p;
    let left = (r + p - 1) % p;
    for _ in 1..p {
        w.sendrecv(right, left, tag, bytes, bytes);
        if reduce {
            w.op(bytes);
        }
    }
}
