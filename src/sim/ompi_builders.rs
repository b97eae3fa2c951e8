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

use super::builder::ScheduleBuilder;
use super::builders::ToSchedule;
use super::builders::{ceil_log2, check_ranks, floor_log2, fold, lowbit, sized_builder, unfold};
use super::op::OpId;
use super::schedule::Schedule;
use crate::collectives::ompi::{
    Allgather, Allreduce, Alltoall, Barrier, Bcast, Gather, MAX_TREE_FANOUT, Reduce, ReduceScatter,
    Scatter,
};
use crate::collectives::{self as textbook, Problem};
use crate::error::{CollectiveError, SimError};

/// A schedule under construction, each rank written as a program of MPI calls.
struct Program<'a> {
    b: ScheduleBuilder,
    problem: &'a Problem,
    rank: u64,
    /// What the next call requires: the last blocking call and the requests waited on since.
    after: Vec<OpId>,
    /// Non-blocking sends not yet waited on.
    pending: Vec<OpId>,
}

impl<'a> Program<'a> {
    /// Checks `P` and the estimated size (`ops_per_rank` operations per rank on average, an
    /// upper bound) and starts; reserves room for at most 2^22 operations up front (the arrays
    /// grow beyond).
    fn new(problem: &'a Problem, ops_per_rank: u64) -> Result<Self, SimError> {
        Ok(Self {
            b: sized_builder(problem.processes, ops_per_rank)?,
            problem,
            rank: 0,
            after: Vec::new(),
            pending: Vec::new(),
        })
    }

    /// Starts the program of rank `r`.
    fn rank(&mut self, r: u64) {
        self.rank = r;
        self.after.clear();
        self.pending.clear();
    }

    fn require(&mut self, op: OpId) {
        for &d in &self.after {
            self.b.requires(op, d);
        }
    }

    /// A blocking call's operation: it requires what came before, and everything after it.
    fn blocking(&mut self, op: OpId) {
        self.require(op);
        self.after.clear();
        self.after.push(op);
    }

    fn isend(&mut self, peer: u64, tag: u32, bytes: u64) {
        let op = self
            .b
            .send_message(self.rank, peer, tag, self.problem.piece(bytes));
        self.require(op);
        self.pending.push(op);
    }

    fn irecv(&mut self, peer: u64, tag: u32, bytes: u64) -> OpId {
        let op = self
            .b
            .recv_message(self.rank, peer, tag, self.problem.piece(bytes));
        self.require(op);
        op
    }

    /// `MPI_Wait` on a request.
    fn wait(&mut self, op: OpId) {
        self.after.push(op);
    }

    /// `MPI_Waitall` on the pending sends.
    fn waitall(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        self.after.extend(pending);
    }

    fn send(&mut self, peer: u64, tag: u32, bytes: u64) {
        let op = self
            .b
            .send_message(self.rank, peer, tag, self.problem.piece(bytes));
        self.blocking(op);
    }

    fn recv(&mut self, peer: u64, tag: u32, bytes: u64) {
        let op = self
            .b
            .recv_message(self.rank, peer, tag, self.problem.piece(bytes));
        self.blocking(op);
    }

    /// `ompi_coll_base_sendrecv`: both posted together, both completed before the next call.
    fn sendrecv(&mut self, to: u64, from: u64, tag: u32, send_bytes: u64, recv_bytes: u64) {
        let s = self
            .b
            .send_message(self.rank, to, tag, self.problem.piece(send_bytes));
        let r = self
            .b
            .recv_message(self.rank, from, tag, self.problem.piece(recv_bytes));
        self.require(s);
        self.require(r);
        self.after.clear();
        self.after.extend([s, r]);
    }

    /// The operator on `bytes` bytes (nothing when it costs nothing).
    fn op(&mut self, bytes: u64) {
        let cost = self.problem.operator.cost(bytes);
        if cost > 0.0 {
            let op = self.b.calc(self.rank, cost);
            self.blocking(op);
        }
    }

    fn finish(self) -> Result<Schedule, SimError> {
        self.b.build()
    }
}

/// A tree of `coll_base_topo.c`: each process's parent and children (in Open MPI's order).
struct Tree {
    root: u64,
    parent: Vec<u64>,
    children: Vec<Vec<u64>>,
}

impl Tree {
    fn from_children(p: u64, root: u64, children: impl Fn(u64) -> Vec<u64>) -> Self {
        let n = p as usize;
        let mut parent = vec![root; n];
        let mut lists = Vec::with_capacity(n);
        for v in 0..p {
            let c = children(v);
            for &child in &c {
                parent[child as usize] = v;
            }
            lists.push(c);
        }
        Self {
            root,
            parent,
            children: lists,
        }
    }

    /// `ompi_coll_base_topo_build_chain`: `fanout` chains (clamped to `1..=32` and `P - 1`),
    /// the first `(P - 1) mod f` of them one longer.
    fn chain(fanout: u64, p: u64) -> Self {
        let f = fanout
            .clamp(1, MAX_TREE_FANOUT)
            .min(p.saturating_sub(1))
            .max(1);
        let n = p.saturating_sub(1);
        let mut heads = Vec::new();
        let mut ends = Vec::new();
        if n > 0 {
            let (max_len, mark) = if n.is_multiple_of(f) {
                (n / f, f + 1)
            } else {
                (n / f + 1, n % f)
            };
            let mut head = 1;
            for i in 0..f {
                let len = if i < mark { max_len } else { max_len - 1 };
                if len == 0 {
                    continue;
                }
                heads.push(head);
                ends.push(head + len - 1);
                head += len;
            }
        }
        Self::from_children(p, 0, |v| {
            if v == 0 {
                heads.clone()
            } else if ends.contains(&v) || v + 1 >= p {
                Vec::new()
            } else {
                vec![v + 1]
            }
        })
    }

    /// `ompi_coll_base_topo_build_tree(2, ..)`: level order, children `v + 2^l`, `v + 2^(l+1)`.
    fn binary(p: u64) -> Self {
        Self::from_children(p, 0, |v| {
            let delta = 1u64 << floor_log2(v + 1);
            [v + delta, v + 2 * delta]
                .into_iter()
                .filter(|&c| c < p)
                .collect()
        })
    }

    /// `ompi_coll_base_topo_build_bmtree`: children `v ^ mask` for the masks above `v`'s top bit.
    fn binomial(p: u64) -> Self {
        Self::from_children(p, 0, |v| {
            let mut mask = if v == 0 {
                1
            } else {
                1u64 << (64 - v.leading_zeros())
            };
            let mut out = Vec::new();
            while mask < p {
                let child = v ^ mask;
                if child >= p {
                    break;
                }
                out.push(child);
                mask <<= 1;
            }
            out
        })
    }

    /// `ompi_coll_base_topo_build_kmtree`: children `v + c r^j` (`j` below `v`'s lowest
    /// non-zero digit, from the largest down, `c = 1 … r-1`) that are below `P`.
    fn knomial(radix: u64, p: u64) -> Self {
        let r = u128::from(radix.max(2));
        let pp = u128::from(p);
        Self::from_children(p, 0, |v| {
            let v = u128::from(v);
            let mut mask = 1u128;
            while mask < pp {
                if v % (r * mask) != 0 {
                    break;
                }
                mask *= r;
            }
            mask /= r;
            let mut out = Vec::new();
            while mask > 0 {
                for c in 1..r {
                    let child = v + mask * c;
                    if child >= pp {
                        break;
                    }
                    out.push(child as u64);
                }
                mask /= r;
            }
            out
        })
    }

    /// `ompi_coll_base_topo_build_in_order_bintree`: root `P - 1`, left child `parent - 1`,
    /// right child the top of the right subtree of `⌊size/2⌋` processes.
    fn in_order_binary(p: u64) -> Self {
        // signed, as in Open MPI: a left child becomes the parent (-1 for an empty subtree)
        let children = |rank: u64| {
            let (mut size, mut myrank, mut parent, mut delta) =
                (p as i64, rank as i64, p as i64 - 1, 0i64);
            loop {
                let rightsize = size >> 1;
                let lchild = if size > 1 { parent - 1 } else { -1 };
                let rchild = if lchild > 0 { rightsize - 1 } else { -1 };
                if myrank == parent {
                    return [lchild, rchild]
                        .into_iter()
                        .filter(|&c| c >= 0)
                        .map(|c| (c + delta) as u64)
                        .collect::<Vec<_>>();
                }
                if myrank > rchild {
                    size = size - rightsize - 1;
                    delta += rightsize;
                    myrank -= rightsize;
                    parent = size - 1;
                } else {
                    size = rightsize;
                    parent = rchild;
                }
            }
        };
        Self::from_children(p, p - 1, children)
    }

    fn max_children(&self) -> u64 {
        self.children.iter().map(Vec::len).max().unwrap_or(0) as u64
    }
}

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
fn bcast_generic(w: &mut Program<'_>, tree: &Tree, r: u64, s: u64, q: u64, tag: u32) {
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

fn bcast_tree(problem: &Problem, tree: &Tree, m: u64, segment: u64) -> Result<Schedule, SimError> {
    let (s, q) = segments(m, segment);
    let mut w = Program::new(problem, tree_ops(tree, q))?;
    for r in 0..problem.processes {
        w.rank(r);
        bcast_generic(&mut w, tree, r, s, q, 0);
    }
    w.finish()
}

/// `ompi_coll_base_reduce_generic` over `tree`: a process with children posts the receive of
/// segment `j` from child `i`, waits for the previous receive and reduces it; after the last
/// child of a segment it reduces and sends the segment to its parent (blocking). A leaf sends
/// its `q` segments with blocking sends.
fn reduce_generic(w: &mut Program<'_>, tree: &Tree, r: u64, s: u64, q: u64) {
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

fn reduce_tree(problem: &Problem, tree: &Tree, m: u64, segment: u64) -> Result<Schedule, SimError> {
    let (s, q) = segments(m, segment);
    let mut w = Program::new(problem, tree_ops(tree, q))?;
    for r in 0..problem.processes {
        w.rank(r);
        reduce_generic(&mut w, tree, r, s, q);
    }
    w.finish()
}

/// The root posts a send of `bytes` to every other rank (`isend`s, one wait); the others
/// receive.
fn linear_bcast(w: &mut Program<'_>, r: u64, p: u64, tag: u32, bytes: u64) {
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
fn linear_reduce(w: &mut Program<'_>, r: u64, p: u64, tag: u32, m: u64) {
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
fn binomial_scatter(w: &mut Program<'_>, r: u64, p: u64, c: u64, tag: u32) {
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
fn ring(w: &mut Program<'_>, r: u64, p: u64, bytes: u64, tag: u32, reduce: bool) {
    let right = (r + 1) % p;
    let left = (r + p - 1) % p;
    for _ in 1..p {
        w.sendrecv(right, left, tag, bytes, bytes);
        if reduce {
            w.op(bytes);
        }
    }
}

// Open MPI folds its recursive algorithms for `P` not a power of two as MPICH does (`fold`,
// `unfold` of the textbook builders), but for Rabenseifner:

/// The folding of Open MPI's Rabenseifner algorithms (`coll_base_allreduce.c`,
/// `coll_base_reduce.c`): the *even* ranks below `2 rem` stay (`newrank = r/2`), the odd ones
/// hand over; `(rem, p', newrank)`.
fn fold_even(p: u64, r: u64) -> (u64, u64, Option<u64>) {
    let pp = 1u64 << floor_log2(p);
    let rem = p - pp;
    let new = if r < 2 * rem {
        r.is_multiple_of(2).then_some(r / 2)
    } else {
        Some(r - rem)
    };
    (rem, pp, new)
}

/// The real rank of a Rabenseifner `newrank` ([`fold_even`]).
fn unfold_even(rem: u64, new: u64) -> u64 {
    if new < rem { 2 * new } else { new + rem }
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
                let mut w = Program::new(problem, 2 + 2 * p)?;
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
fn linear(problem: &Problem, bytes: u64) -> Result<Schedule, SimError> {
    let mut w = Program::new(problem, 2)?;
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
fn split_binary_tree(problem: &Problem, half: u64, segment: u64) -> Result<Schedule, SimError> {
    let p = problem.processes;
    let tree = Tree::binary(p);
    let (s, q) = segments(half, segment);
    let mut w = Program::new(problem, tree_ops(&tree, q) + 2)?;
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
fn scatter_allgather(problem: &Problem, m: u64) -> Result<Schedule, SimError> {
    let p = problem.processes;
    let c = m.div_ceil(p);
    let h = u64::from(ceil_log2(p));
    let mut w = Program::new(problem, 4 + 2 * h + 2 * h * h)?;
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

impl ToSchedule for Allreduce {
    /// `ompi_coll_base_allreduce_intra_*`, as Open MPI 4.1 runs them (`docs/SIMULATOR.md`).
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        check_ranks(p)?;
        let m = problem.message.bytes();
        match *self {
            Self::BasicLinear => {
                let mut w = Program::new(problem, 6)?;
                for r in 0..p {
                    w.rank(r);
                    if p > 1 {
                        linear_reduce(&mut w, r, p, 0, m);
                        linear_bcast(&mut w, r, p, 1, m);
                    }
                }
                w.finish()
            }
            Self::Nonoverlapping => {
                let tree = Tree::binomial(p);
                let mut w = Program::new(problem, tree_ops(&tree, 1) * 2)?;
                for r in 0..p {
                    w.rank(r);
                    reduce_generic(&mut w, &tree, r, m, 1);
                    bcast_generic(&mut w, &tree, r, m, 1, 1);
                }
                w.finish()
            }
            Self::RecursiveDoubling => textbook::Allreduce::RecursiveDoubling.schedule(problem),
            Self::Ring | Self::SegmentedRing { segment: 0 } => {
                if m < p {
                    textbook::Allreduce::RecursiveDoubling.schedule(problem)
                } else {
                    textbook::Allreduce::Ring.schedule(problem)
                }
            }
            Self::SegmentedRing { segment } => {
                let round = p.saturating_mul(segment);
                if m < round {
                    return Self::Ring.schedule(problem);
                }
                let rest = m % round;
                let phases = m / round + u64::from(rest >= p && rest > round / 2);
                let c = m.div_ceil(p);
                let piece = c.div_ceil(phases);
                let per_rank = phases.saturating_add(1).saturating_mul(3 * p);
                let mut w = Program::new(problem, per_rank)?;
                for r in 0..p {
                    w.rank(r);
                    for phase in 0..phases {
                        ring(&mut w, r, p, piece, 1 + (phase % 1000) as u32, true);
                    }
                    ring(&mut w, r, p, c, 0, false);
                }
                w.finish()
            }
            Self::Rabenseifner => {
                let hp = floor_log2(p);
                if m < 1u64 << hp {
                    return Self::BasicLinear.schedule(problem);
                }
                let mut w = Program::new(problem, 6 * u64::from(hp) + 8)?;
                for r in 0..p {
                    w.rank(r);
                    let (rem, pp, new) = fold_even(p, r);
                    let half = m.div_ceil(2);
                    if r < 2 * rem {
                        // exchange halves, reduce one; the odd process sends its reduced half
                        // to the even one and waits for the result
                        let partner = r ^ 1;
                        w.sendrecv(partner, partner, 0, half, half);
                        w.op(half);
                        if r % 2 == 1 {
                            w.send(partner, 1, half);
                            w.recv(partner, 9, m);
                            continue;
                        }
                        w.recv(partner, 1, half);
                    }
                    let new = new.unwrap_or(0);
                    rabenseifner_halving(&mut w, rem, pp, new, m, 2);
                    rabenseifner_doubling(&mut w, rem, pp, new, m, 3);
                    if r < 2 * rem {
                        w.send(r + 1, 9, m);
                    }
                }
                w.finish()
            }
        }
    }
}

/// The reduce-scatter of Rabenseifner's algorithm (Open MPI: recursive vector halving,
/// distance doubling): at `mask = 2^i` exchange `⌈m/2^(i+1)⌉` bytes with `newrank ^ mask` and
/// reduce them.
fn rabenseifner_halving(w: &mut Program<'_>, rem: u64, pp: u64, new: u64, m: u64, tag: u32) {
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
fn rabenseifner_doubling(w: &mut Program<'_>, rem: u64, pp: u64, new: u64, m: u64, tag: u32) {
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

impl ToSchedule for Reduce {
    /// `ompi_coll_base_reduce_intra_*`, as Open MPI 4.1 runs them (`docs/SIMULATOR.md`).
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        check_ranks(p)?;
        let m = problem.message.bytes();
        match *self {
            Self::Linear => {
                let mut w = Program::new(problem, 4)?;
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
            Self::Binomial { segment } => reduce_tree(problem, &Tree::binomial(p), m, segment),
            Self::InOrderBinary { segment } => {
                let tree = Tree::in_order_binary(p);
                let (s, q) = segments(m, segment);
                let mut w = Program::new(problem, tree_ops(&tree, q) + 2)?;
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
                let mut w = Program::new(problem, 6 * u64::from(hp) + 8)?;
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

impl ToSchedule for Allgather {
    /// `ompi_coll_base_allgather_intra_*`, as Open MPI 4.1 runs them (`docs/SIMULATOR.md`).
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        check_ranks(p)?;
        if *self == Self::TwoProc {
            two_proc_only(p)?;
        }
        let m = problem.message.bytes();
        match self {
            Self::Linear => {
                let tree = Tree::binomial(p);
                let all = m.saturating_mul(p);
                let mut w = Program::new(problem, 4 + 2 * tree.max_children())?;
                for r in 0..p {
                    w.rank(r);
                    if r == 0 {
                        for peer in 1..p {
                            w.recv(peer, 0, m);
                        }
                    } else {
                        w.send(0, 0, m);
                    }
                    bcast_generic(&mut w, &tree, r, all, 1, 1);
                }
                w.finish()
            }
            Self::Bruck => textbook::Allgather::Bruck.schedule(problem),
            Self::RecursiveDoubling => {
                if p.is_power_of_two() {
                    textbook::Allgather::RecursiveDoubling.schedule(problem)
                } else {
                    textbook::Allgather::Bruck.schedule(problem)
                }
            }
            Self::Ring => textbook::Allgather::Ring.schedule(problem),
            Self::Neighbor => {
                if p % 2 == 1 {
                    return textbook::Allgather::Ring.schedule(problem);
                }
                let mut w = Program::new(problem, p + 2)?;
                let two = m.saturating_mul(2);
                for r in 0..p {
                    w.rank(r);
                    // even ranks: first the right neighbour, then alternate; odd: the left
                    let (first, second) = if r % 2 == 0 {
                        ((r + 1) % p, (r + p - 1) % p)
                    } else {
                        ((r + p - 1) % p, (r + 1) % p)
                    };
                    w.sendrecv(first, first, 0, m, m);
                    for i in 1..p / 2 {
                        let peer = if i % 2 == 1 { second } else { first };
                        w.sendrecv(peer, peer, 0, two, two);
                    }
                }
                w.finish()
            }
            Self::TwoProc => two_proc_exchange(problem, m),
        }
    }
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
    let mut w = Program::new(problem, 2)?;
    for r in 0..p {
        w.rank(r);
        if p == 2 {
            w.sendrecv(1 - r, 1 - r, 0, m, m);
        }
    }
    w.finish()
}

impl ToSchedule for Alltoall {
    /// `ompi_coll_base_alltoall_intra_*`, as Open MPI 4.1 runs them (`docs/SIMULATOR.md`).
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        check_ranks(p)?;
        if *self == Self::TwoProc {
            two_proc_only(p)?;
        }
        let m = problem.message.bytes();
        match *self {
            Self::Pairwise => textbook::Alltoall::PairwiseExchange.schedule(problem),
            Self::ModifiedBruck => textbook::Alltoall::Bruck.schedule(problem),
            Self::Linear | Self::LinearSync { .. } => {
                let batch = match *self {
                    Self::LinearSync { max_requests } if max_requests != 0 && max_requests < p => {
                        max_requests
                    }
                    _ => p.saturating_sub(1).max(1),
                };
                let mut w = Program::new(problem, 2 * p)?;
                for r in 0..p {
                    w.rank(r);
                    // batches of receives from r - j and sends to r + j, j = 1 … P - 1
                    let mut j = 1;
                    while j < p {
                        let end = (j + batch).min(p);
                        let recvs: Vec<OpId> =
                            (j..end).map(|d| w.irecv((r + p - d) % p, 0, m)).collect();
                        for d in j..end {
                            w.isend((r + d) % p, 0, m);
                        }
                        for h in recvs {
                            w.wait(h);
                        }
                        w.waitall();
                        j = end;
                    }
                }
                w.finish()
            }
            Self::TwoProc => two_proc_exchange(problem, m),
        }
    }
}

impl ToSchedule for Barrier {
    /// `ompi_coll_base_barrier_intra_*`, as Open MPI 4.1 runs them (`docs/SIMULATOR.md`).
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        check_ranks(p)?;
        if *self == Self::TwoProc {
            two_proc_only(p)?;
        }
        // a barrier's messages are empty, whatever the problem's message
        let problem = &problem.with_bytes(0);
        let h = u64::from(ceil_log2(p));
        let mut w = Program::new(problem, 4 * h + 8)?;
        for r in 0..p {
            w.rank(r);
            if p == 1 {
                continue;
            }
            match self {
                Self::Linear => {
                    if r == 0 {
                        for peer in 1..p {
                            w.recv(peer, 0, 0);
                        }
                        for peer in 1..p {
                            w.isend(peer, 1, 0);
                        }
                        w.waitall();
                    } else {
                        w.send(0, 0, 0);
                        w.recv(0, 1, 0);
                    }
                }
                Self::DoubleRing => {
                    let (left, right) = ((r + p - 1) % p, (r + 1) % p);
                    for trip in 0..2 {
                        if r > 0 {
                            w.recv(left, trip, 0);
                        }
                        w.send(right, trip, 0);
                        if r == 0 {
                            w.recv(left, trip, 0);
                        }
                    }
                }
                Self::RecursiveDoubling => {
                    let pp = 1u64 << floor_log2(p);
                    if r >= pp {
                        w.send(r - pp, 0, 0);
                        w.recv(r - pp, 2, 0);
                        continue;
                    }
                    if r < p - pp {
                        w.recv(r + pp, 0, 0);
                    }
                    let mut mask = 1;
                    while mask < pp {
                        w.sendrecv(r ^ mask, r ^ mask, 1, 0, 0);
                        mask <<= 1;
                    }
                    if r < p - pp {
                        w.send(r + pp, 2, 0);
                    }
                }
                Self::Bruck => {
                    let mut d = 1;
                    let mut k = 0;
                    while d < p {
                        w.sendrecv((r + d) % p, (r + p - d) % p, k, 0, 0);
                        d <<= 1;
                        k += 1;
                    }
                }
                Self::TwoProc => w.sendrecv(1 - r, 1 - r, 0, 0, 0),
                Self::Tree => {
                    let depth = 1u64 << ceil_log2(p);
                    let mut jump = 1;
                    while jump < depth {
                        let partner = r ^ jump;
                        if partner & (jump - 1) == 0 && partner < p {
                            if partner > r {
                                w.recv(partner, 0, 0);
                            } else {
                                w.send(partner, 0, 0);
                            }
                        }
                        jump <<= 1;
                    }
                    let mut jump = depth >> 1;
                    while jump > 0 {
                        let partner = r ^ jump;
                        if partner & (jump - 1) == 0 && partner < p {
                            if partner > r {
                                w.send(partner, 1, 0);
                            } else {
                                w.recv(partner, 1, 0);
                            }
                        }
                        jump >>= 1;
                    }
                }
            }
        }
        w.finish()
    }
}

impl ToSchedule for ReduceScatter {
    /// `ompi_coll_base_reduce_scatter_intra_*`, as Open MPI 4.1 runs them (`docs/SIMULATOR.md`).
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        check_ranks(p)?;
        let m = problem.message.bytes();
        let c = m.div_ceil(p);
        let h = u64::from(ceil_log2(p));
        // the non-overlapping root's P - 1 scatter sends are one more per rank on average
        let per_rank = match self {
            Self::Ring => 3 * p,
            _ => 4 * h + 10,
        };
        let mut w = Program::new(problem, per_rank)?;
        for r in 0..p {
            w.rank(r);
            if p == 1 {
                continue;
            }
            match self {
                Self::NonOverlapping => {
                    let tree = Tree::binomial(p);
                    reduce_generic(&mut w, &tree, r, m, 1);
                    linear_bcast(&mut w, r, p, 1, c);
                }
                Self::Ring => ring(&mut w, r, p, c, 0, true),
                Self::RecursiveHalving | Self::Butterfly => {
                    let (rem, pp, new) = fold(p, r);
                    if r < 2 * rem {
                        if r % 2 == 0 {
                            w.send(r + 1, 0, m);
                            w.recv(r + 1, 9, c);
                            continue;
                        }
                        w.recv(r - 1, 0, m);
                        w.op(m);
                    }
                    let new = new.unwrap_or(0);
                    // round k = 1 … h' exchanges ⌈m/2^k⌉: recursive halving pairs at distance
                    // p'/2^k, the butterfly at distance 2^(k-1)
                    for k in 1..=floor_log2(p) {
                        let mask = if *self == Self::RecursiveHalving {
                            pp >> k
                        } else {
                            1u64 << (k - 1)
                        };
                        let peer = unfold(rem, new ^ mask);
                        let piece = m.div_ceil(1u64 << k);
                        w.sendrecv(peer, peer, 1, piece, piece);
                        w.op(piece);
                    }
                    if r < 2 * rem {
                        w.send(r - 1, 9, c);
                    }
                }
            }
        }
        w.finish()
    }
}

impl ToSchedule for Gather {
    /// `ompi_coll_base_gather_intra_*`, as Open MPI 4.1 runs them (`docs/SIMULATOR.md`).
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        check_ranks(p)?;
        let m = problem.message.bytes();
        match *self {
            Self::Binomial => textbook::Gather::Binomial.schedule(problem),
            Self::BasicLinear => {
                let mut w = Program::new(problem, 2)?;
                for r in 0..p {
                    w.rank(r);
                    if r == 0 {
                        for peer in 1..p {
                            w.recv(peer, 0, m);
                        }
                    } else {
                        w.send(0, 0, m);
                    }
                }
                w.finish()
            }
            Self::LinearSync { segment } => {
                let first = if segment == 0 { m } else { segment.min(m) };
                let rest = m - first;
                let mut w = Program::new(problem, 8)?;
                for r in 0..p {
                    w.rank(r);
                    if r == 0 {
                        // per process: post the first segment's receive, send the go-ahead,
                        // post the rest's receive, wait for the first segment
                        let mut rests = Vec::new();
                        for peer in 1..p {
                            let head = w.irecv(peer, 1, first);
                            w.send(peer, 0, 0);
                            if rest > 0 {
                                rests.push(w.irecv(peer, 2, rest));
                            }
                            w.wait(head);
                        }
                        for h in rests {
                            w.wait(h);
                        }
                    } else {
                        w.recv(0, 0, 0);
                        w.send(0, 1, first);
                        if rest > 0 {
                            w.send(0, 2, rest);
                        }
                    }
                }
                w.finish()
            }
        }
    }
}

impl ToSchedule for Scatter {
    /// `ompi_coll_base_scatter_intra_*`, as Open MPI 4.1 runs them (`docs/SIMULATOR.md`).
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        check_ranks(p)?;
        let m = problem.message.bytes();
        match self {
            Self::Binomial => textbook::Scatter::Binomial.schedule(problem),
            Self::BasicLinear | Self::LinearNb => {
                let mut w = Program::new(problem, 2)?;
                for r in 0..p {
                    w.rank(r);
                    if r == 0 {
                        for peer in 1..p {
                            if *self == Self::BasicLinear {
                                w.send(peer, 0, m);
                            } else {
                                w.isend(peer, 0, m);
                            }
                        }
                        w.waitall();
                    } else {
                        w.recv(0, 0, m);
                    }
                }
                w.finish()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Children lists as `coll_base_topo.c` draws them.
    #[test]
    fn trees_as_open_mpi_draws_them() {
        // bmtree, size 8: 0 → 1 2 4, 1 → 3 5, 2 → 6, 3 → 7
        let t = Tree::binomial(8);
        assert_eq!(t.children[0], vec![1, 2, 4]);
        assert_eq!(t.children[1], vec![3, 5]);
        assert_eq!(t.children[3], vec![7]);
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
