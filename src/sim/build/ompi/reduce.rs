//! The schedules of Open MPI's reduces ([`Reduce`]).

use super::tree::Tree;
use super::*;
use crate::collectives::Problem;
use crate::collectives::ompi::Reduce;
use crate::sim::SimError;
use crate::sim::build::ToSchedule;
use crate::sim::build::writer::Calls;
use crate::sim::schedule::Schedule;
use crate::util::bits::floor_log2;

pub(super) fn reduce_tree(
    problem: &Problem,
    tree: &Tree,
    m: u64,
    segment: u64,
) -> Result<Schedule, SimError> {
    let (s, q) = segments(m, segment);
    let mut w = Calls::new(problem, tree_ops(tree, q))?;
    for r in 0..problem.processes {
        w.rank(r);
        reduce_generic(&mut w, tree, r, s, q);
    }
    w.finish()
}

impl ToSchedule for Reduce {
    /// `ompi_coll_base_reduce_intra_*`, as Open MPI 4.1 runs them (`docs/SIMULATOR.md`).
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        check_ranks(p)?;
        let m = problem.message.bytes();
        match *self {
            Self::Linear => {
                let mut w = Calls::new(problem, 4)?;
                for r in 0..p {
                    w.rank(r);
                    if p > 1 {
                        linear_reduce(&mut w, r, p, 0, m);
                    }
                }
                w.finish()
            }
            Self::Chain { segment, fanout } => {
                reduce_tree(problem, &Tree::chain(fanout, p), m, segment)
            }
            Self::Pipeline { segment } => reduce_tree(problem, &Tree::chain(1, p), m, segment),
            Self::Binary { segment } => reduce_tree(problem, &Tree::binary(p), m, segment),
            Self::Binomial { segment } => {
                reduce_tree(problem, &Tree::in_order_binomial(p), m, segment)
            }
            Self::InOrderBinary { segment } => {
                let tree = Tree::in_order_binary(p);
                let (s, q) = segments(m, segment);
                let mut w = Calls::new(problem, tree_ops(&tree, q) + 2)?;
                for r in 0..p {
                    w.rank(r);
                    reduce_generic(&mut w, &tree, r, s, q);
                    // the tree's root is P - 1; it sends the result on to the root, 0
                    // (coll_base_reduce.c, ompi_coll_base_reduce_intra_in_order_binary)
                    if p > 1 && r == p - 1 {
                        w.send(0, 1, m);
                    } else if p > 1 && r == 0 {
                        w.recv(p - 1, 1, m);
                    }
                }
                w.finish()
            }
            Self::Rabenseifner => {
                let hp = floor_log2(p);
                if m < 1u64 << hp {
                    return Self::Linear.schedule(problem);
                }
                let mut w = Calls::new(problem, 6 * u64::from(hp) + 8)?;
                for r in 0..p {
                    w.rank(r);
                    let (rem, pp, new) = fold_even(p, r);
                    let half = m.div_ceil(2);
                    if r < 2 * rem {
                        let partner = r ^ 1;
                        w.sendrecv(partner, partner, 0, half, half);
                        w.op(half);
                        if r % 2 == 1 {
                            w.send(partner, 1, half);
                            continue;
                        }
                        w.recv(partner, 1, half);
                    }
                    let new = new.unwrap_or(0);
                    rabenseifner_halving(&mut w, rem, pp, new, m, 2);
                    // binomial gather of the pieces to newrank 0, distance halving: at
                    // mask = 2^i the piece is ⌈m/2^(i+1)⌉
                    let mut mask = pp >> 1;
                    let mut k = floor_log2(pp);
                    while mask > 0 {
                        let piece = m.div_ceil(1u64 << k);
                        if new < 2 * mask {
                            if new & mask != 0 {
                                w.send(unfold_even(rem, new - mask), 3, piece);
                                break;
                            }
                            w.recv(unfold_even(rem, new + mask), 3, piece);
                        }
                        mask >>= 1;
                        k = k.saturating_sub(1);
                    }
                }
                w.finish()
            }
        }
    }
}
