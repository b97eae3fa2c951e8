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

/// Binomial tree upwards (gather, reduce): receive from each child, smallest subtree first,
/// each receive followed by `op(m)` when `reduce`; then send to the parent.
pub(super) fn binomial_up(
    w: &mut Steps<'_>,
    r: u64,
    p: u64,
    bytes: impl Fn(u64) -> u64,
    reduce: bool,
) {
    let top = if r == 0 {
        1u64 << ceil_log2(p)
    } else {
        lowbit(r)
    };
    let mut mask = 1;
    while mask < top {
        let child = r + mask;
        if child < p {
            w.recv_step(child, 0, bytes(child));
            if reduce {
                let m = w.m();
                w.op(m);
            }
        }
        mask <<= 1;
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
