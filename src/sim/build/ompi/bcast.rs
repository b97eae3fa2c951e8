//! The schedules of Open MPI's broadcasts ([`Bcast`]).

use super::tree::Tree;
use super::*;
use crate::collectives::CollectiveError;
use crate::collectives::Problem;
use crate::collectives::ompi::Bcast;
use crate::sim::SimError;
use crate::sim::build::ToSchedule;
use crate::sim::build::writer::Calls;
use crate::sim::schedule::Schedule;
use crate::util::bits::ceil_log2;

pub(super) fn bcast_tree(
    problem: &Problem,
    tree: &Tree,
    m: u64,
    segment: u64,
) -> Result<Schedule, SimError> {
    let (s, q) = segments(m, segment);
    let mut w = Calls::new(problem, tree_ops(tree, q))?;
    for r in 0..problem.processes {
        w.rank(r);
        bcast_generic(&mut w, tree, r, s, q, 0);
    }
    w.finish()
}

impl ToSchedule for Bcast {
    /// `ompi_coll_base_bcast_intra_*`, as Open MPI 4.1 runs them (`docs/SIMULATOR.md`).
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        if let Self::Knomial { radix, .. } = *self
            && radix < 2
        {
            return Err(CollectiveError::InvalidParameter {
                algorithm: "knomial",
                name: "radix",
                value: radix,
                expected: "at least 2",
            }
            .into());
        }
        let p = problem.processes;
        check_ranks(p)?;
        let m = problem.message.bytes();
        match *self {
            Self::BasicLinear => linear(problem, m),
            Self::Chain { segment, fanout } => {
                bcast_tree(problem, &Tree::chain(fanout, p), m, segment)
            }
            Self::Pipeline { segment } => bcast_tree(problem, &Tree::chain(1, p), m, segment),
            Self::BinaryTree { segment } => bcast_tree(problem, &Tree::binary(p), m, segment),
            Self::Binomial { segment } => bcast_tree(problem, &Tree::binomial(p), m, segment),
            Self::Knomial { segment, radix } => {
                bcast_tree(problem, &Tree::knomial(radix, p), m, segment)
            }
            Self::SplitBinaryTree { segment } => {
                let (first, second) = (m.div_ceil(2), m / 2);
                if second == 0 || segment > second {
                    return bcast_tree(problem, &Tree::chain(1, p), m, segment);
                }
                split_binary_tree(problem, first, segment)
            }
            Self::ScatterAllgather | Self::ScatterAllgatherRing if m < p => linear(problem, m),
            Self::ScatterAllgather => scatter_allgather(problem, m),
            Self::ScatterAllgatherRing => {
                let c = m.div_ceil(p);
                let mut w = Calls::new(problem, 2 + 2 * p)?;
                for r in 0..p {
                    w.rank(r);
                    binomial_scatter(&mut w, r, p, c, 0);
                    ring(&mut w, r, p, c, 1, false);
                }
                w.finish()
            }
        }
    }
}

/// The linear broadcast of `bytes` from rank 0.
pub(super) fn linear(problem: &Problem, bytes: u64) -> Result<Schedule, SimError> {
    let mut w = Calls::new(problem, 2)?;
    for r in 0..problem.processes {
        w.rank(r);
        linear_bcast(&mut w, r, problem.processes, 0, bytes);
    }
    w.finish()
}

/// `ompi_coll_base_bcast_intra_split_bintree`: the first half down the root's left subtree
/// (odd ranks), the second down its right subtree (even ranks), both in segments over the
/// binary tree; then each process exchanges halves with its pair (`r + 1` on the left,
/// `r - 1` on the right); for `P` even, rank `P - 1` gets the second half from the root.
/// Both halves and the exchange carry `⌈m/2⌉` bytes (the closed form's sizes).
pub(super) fn split_binary_tree(
    problem: &Problem,
    half: u64,
    segment: u64,
) -> Result<Schedule, SimError> {
    let p = problem.processes;
    let tree = Tree::binary(p);
    let (s, q) = segments(half, segment);
    let mut w = Calls::new(problem, tree_ops(&tree, q) + 2)?;
    for r in 0..p {
        w.rank(r);
        bcast_generic(&mut w, &tree, r, s, q, 0);
        if p % 2 == 1 {
            if r != 0 {
                let pair = if r % 2 == 1 { r + 1 } else { r - 1 };
                w.sendrecv(pair, pair, 1, half, half);
            }
        } else if r == 0 {
            w.send(p - 1, 1, half);
        } else if r == p - 1 {
            w.recv(0, 1, half);
        } else {
            let pair = if r % 2 == 1 { r + 1 } else { r - 1 };
            w.sendrecv(pair, pair, 1, half, half);
        }
    }
    w.finish()
}

/// `ompi_coll_base_bcast_intra_scatter_allgather`: the binomial scatter of `c = ⌈m/P⌉`-byte
/// blocks, then a recursive-doubling allgather: at `mask = 2^k` rank `v` exchanges `c 2^k`
/// bytes with `v ^ mask` when that is below `P`; and when the partner's subtree is cut by
/// `P`, the `n = P - ⌊v/mask⌋ mask - mask` blocks it lacks are forwarded by recursive halving
/// inside the subtree (`c n` bytes per forward; the closed form does not price them).
pub(super) fn scatter_allgather(problem: &Problem, m: u64) -> Result<Schedule, SimError> {
    let p = problem.processes;
    let c = m.div_ceil(p);
    let h = u64::from(ceil_log2(p));
    let mut w = Calls::new(problem, 4 + 2 * h + 2 * h * h)?;
    for v in 0..p {
        w.rank(v);
        binomial_scatter(&mut w, v, p, c, 0);
        let mut mask = 1u64;
        let mut k = 0u32;
        while mask < p {
            let remote = v ^ mask;
            let own_root = v & !(mask - 1);
            let remote_root = remote & !(mask - 1);
            if remote < p {
                let bytes = c.saturating_mul(mask);
                w.sendrecv(remote, remote, 1 + k, bytes, bytes);
            }
            if remote_root + mask > p {
                let have_all = p.saturating_sub(own_root + mask);
                let bytes = c.saturating_mul(have_all);
                let mut half = mask >> 1;
                while half > 0 {
                    let peer = v ^ half;
                    let subtree = v & !((half << 1) - 1);
                    if peer > v && v < subtree + have_all && peer >= subtree + have_all {
                        w.send(peer, 100 + k, bytes);
                    } else if peer < v && peer < subtree + have_all && v >= subtree + have_all {
                        w.recv(peer, 100 + k, bytes);
                    }
                    half >>= 1;
                }
            }
            mask <<= 1;
            k += 1;
        }
    }
    w.finish()
}
