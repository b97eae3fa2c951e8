//! Open MPI's trees (chain, pipeline, binary, binomial, k-nomial, in-order binary) as the
//! slowest first-segment paths that price its segmented broadcasts and reductions (module docs
//! of [`ompi`](super), "Segmented trees"), and the linear fan-in and fan-out of a root.

use super::MAX_TREE_FANOUT;
use crate::collectives::eval::Pieces;
use crate::util::bits::{ceil_log2, floor_log2};

/// The way of the first segment to one process: `hops` point-to-point times and `waits` sends
/// its parents made to earlier siblings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Path {
    hops: u64,
    waits: u64,
}

/// A tree's slowest first-segment paths and its fan-outs.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Shape {
    /// Up to three candidate paths (the slowest of them is the one that counts).
    Paths {
        paths: [Path; 3],
        root_children: u64,
        inner_children: u64,
    },
    /// A k-nomial tree, searched digit by digit.
    Knomial { radix: u64, processes: u64 },
    /// An in-order binary tree for a reduction, walked over its subtree sizes.
    InOrder { processes: u64 },
    /// An in-order binomial tree for a reduction, walked over its subtree sizes.
    InOrderBinomial { processes: u64 },
}

/// Largest popcount of the integers `0..=n`: `n`'s own, or one less than its bit length.
fn max_popcount_upto(n: u64) -> u64 {
    if n == 0 {
        0
    } else {
        u64::from(n.count_ones()).max(u64::from(64 - n.leading_zeros()) - 1)
    }
}

impl Shape {
    /// Open MPI's chain (`ompi_coll_base_topo_build_chain`): `fanout` chains (clamped to
    /// `1..=32`, as Open MPI does, and to `P - 1`), `P >= 2`.
    pub(crate) fn chain(fanout: u64, p: u64) -> Self {
        let f = fanout.clamp(1, MAX_TREE_FANOUT).min(p - 1).max(1);
        let len = (p - 1).div_ceil(f);
        // the first `mark = (P - 1) mod f` chains are the long ones (all when f divides P - 1):
        // the last long chain waits for mark - 1 earlier heads, the last chain for f - 1
        let (mark, last) = if (p - 1).is_multiple_of(f) {
            (f, len)
        } else {
            ((p - 1) % f, len - 1)
        };
        let path = |hops, waits| Path { hops, waits };
        Self::Paths {
            paths: [path(len, mark - 1), path(last, f - 1), path(0, 0)],
            root_children: f,
            inner_children: u64::from(len > 1),
        }
    }

    /// Open MPI's level-order binary tree (`ompi_coll_base_topo_build_tree(2, ..)`), `P >= 2`.
    pub(crate) fn binary(p: u64) -> Self {
        let d = u64::from(floor_log2(p));
        let last_position = p - (1u64 << d);
        let path = |hops, waits| Path { hops, waits };
        Self::Paths {
            paths: [
                path(d, max_popcount_upto(last_position)),
                path(d - 1, d - 1),
                path(0, 0),
            ],
            root_children: (p - 1).min(2),
            // node 1's children are 3 and 5
            inner_children: u64::from(p > 3) + u64::from(p > 5),
        }
    }

    /// Open MPI's binomial tree (`ompi_coll_base_topo_build_bmtree`), `P >= 2`.
    pub(crate) fn binomial(p: u64) -> Self {
        let h = u64::from(ceil_log2(p));
        let n = p - 1;
        // most set bits of a v <= n with top bit h - 1: n's own, or the top bit and all bits
        // below n's second-highest set bit
        let below_top = n ^ (1u64 << (h - 1));
        let k_max = if below_top == 0 {
            1
        } else {
            u64::from(n.count_ones()).max(u64::from(63 - below_top.leading_zeros()) + 1)
        };
        let path = |hops, waits| Path { hops, waits };
        Self::Paths {
            paths: [path(1, h - 1), path(k_max, h - k_max), path(h - 1, 0)],
            root_children: h,
            // node 1's children 1 ^ 2^j, j >= 1, below P
            inner_children: if p <= 3 {
                0
            } else {
                u64::from(ceil_log2(p - 1)) - 1
            },
        }
    }

    /// Open MPI's in-order binary tree (`ompi_coll_base_topo_build_in_order_bintree`) for a
    /// reduction, `P >= 2`: walked over subtree sizes ([`in_order_fan_in`]).
    pub(crate) fn in_order_fan_in(p: u64) -> Self {
        Self::InOrder { processes: p }
    }

    /// The chain of [`chain`](Self::chain) for a reduction: a parent absorbs its children in
    /// list order, so a child's data waits for its *later* siblings; the first chain is a
    /// long one and waits for the `f - 1` others: `(⌈(P-1)/f⌉, f - 1)`.
    pub(crate) fn chain_fan_in(fanout: u64, p: u64) -> Self {
        let Self::Paths {
            root_children,
            inner_children,
            ..
        } = Self::chain(fanout, p)
        else {
            return Self::chain(fanout, p);
        };
        let f = root_children;
        let len = (p - 1).div_ceil(f);
        let path = |hops, waits| Path { hops, waits };
        Self::Paths {
            paths: [path(len, f - 1), path(0, 0), path(0, 0)],
            root_children,
            inner_children,
        }
    }

    /// The binary tree of [`binary`](Self::binary) for a reduction (children absorbed in list
    /// order, a first child waits for its sibling): position `x` of level `l` waits at each
    /// hop into it as a first child whose sibling exists. Levels above `d = ⌊log2 P⌋` are
    /// full, so the slowest are position 0 of level `d`, `(d, d - 1 + [2^(d-1) <= P - 2^d])`,
    /// and of level `d - 1`, `(d - 1, d - 1)`.
    pub(crate) fn binary_fan_in(p: u64) -> Self {
        let d = u64::from(floor_log2(p));
        let last_position = p - (1u64 << d);
        let path = |hops, waits| Path { hops, waits };
        let sibling = u64::from(d >= 1 && (1u64 << (d - 1)) <= last_position);
        Self::Paths {
            paths: [path(d, (d - 1) + sibling), path(d - 1, d - 1), path(0, 0)],
            root_children: (p - 1).min(2),
            inner_children: u64::from(p > 3) + u64::from(p > 5),
        }
    }

    /// Open MPI's in-order binomial tree (`ompi_coll_base_topo_build_in_order_bmtree`, the
    /// tree of its binomial reduce) for a reduction, `P >= 2`: the children of `v` are
    /// `v + 2^j` for the `2^j` below `v`'s lowest set bit (every `2^j < P` for the root),
    /// smallest subtree first, and a parent absorbs them in that order, so the data of child
    /// `j` of `k` waits for its `k - 1 - j` later siblings. Walked over subtree sizes
    /// ([`in_order_binomial_fan_in`]).
    pub(crate) fn in_order_binomial_fan_in(p: u64) -> Self {
        Self::InOrderBinomial { processes: p }
    }

    /// Open MPI's k-nomial tree (`ompi_coll_base_topo_build_kmtree`), `radix >= 2`, `P >= 2`.
    pub(crate) fn knomial(radix: u64, p: u64) -> Self {
        Self::Knomial {
            radix,
            processes: p,
        }
    }

    /// `(root_children, inner_children)`.
    fn fanouts(&self) -> (u64, u64) {
        match *self {
            Self::Paths {
                root_children,
                inner_children,
                ..
            } => (root_children, inner_children),
            // the root's children (P - 2, and ⌊P/2⌋ - 1 for P >= 3); an inner process has the
            // most under the right child, root of the larger subtree (⌊P/2⌋ processes; a
            // subtree of s >= 3 processes has two children at its root, of 2 one)
            Self::InOrder { processes: p } => (
                (p - 1).min(2),
                match if p >= 3 { p / 2 } else { 0 } {
                    0 | 1 => 0,
                    2 => 1,
                    _ => 2,
                },
            ),
            // the root has a child per 2^j < P; another process v has those below its lowest
            // set bit: most at 2^(h-1) (2^j < P - 2^(h-1), j < h - 1) or at 2^(h-2) (h - 2)
            Self::InOrderBinomial { processes: p } => {
                if p <= 2 {
                    return (p.saturating_sub(1), 0);
                }
                let h = u64::from(ceil_log2(p));
                let half = 1u64 << (h - 1);
                let top = u64::from(ceil_log2(p - half)).min(h - 1);
                (h, top.max(h - 2))
            }
            Self::Knomial { radix, processes } => {
                // N = P - 1 has d digits, the top one N_{d-1} >= 1. The root's children are
                // c r^j < P: r - 1 for each j < d - 1 (N >= r^(j+1)) and N_{d-1} at j = d - 1.
                // Those of r^(d-1) are r^(d-1) + c r^j < P, j < d - 1: with N' = N - r^(d-1)
                // of k digits, r - 1 for each j < k - 1 and N'_{k-1} at j = k - 1 (if < d - 1).
                let (digits, d) = base_digits(radix, processes.saturating_sub(1));
                if d == 0 {
                    return (0, 0);
                }
                let r1 = radix - 1;
                let root = r1
                    .saturating_mul(d as u64 - 1)
                    .saturating_add(digits[d - 1]);
                let mut reduced = digits;
                reduced[d - 1] -= 1;
                let k = reduced[..d]
                    .iter()
                    .rposition(|&x| x != 0)
                    .map_or(0, |i| i + 1);
                let inner = if k == 0 {
                    0
                } else {
                    let whole = r1.saturating_mul((k as u64 - 1).min(d as u64 - 1));
                    let partial = if k - 1 < d - 1 { reduced[k - 1] } else { 0 };
                    whole.saturating_add(partial)
                };
                (root, inner)
            }
        }
    }

    /// The time the slowest process gets the first segment: `max (a hop + b wait)`.
    fn first_arrival(&self, hop: f64, wait: f64) -> f64 {
        match *self {
            Self::Paths { paths, .. } => paths
                .iter()
                .map(|p| p.hops as f64 * hop + p.waits as f64 * wait)
                .fold(0.0, f64::max),
            Self::Knomial { radix, processes } => knomial_arrival(radix, processes, hop, wait),
            Self::InOrder { processes } => in_order_fan_in(processes, hop, wait),
            Self::InOrderBinomial { processes } => in_order_binomial_fan_in(processes, hop, wait),
        }
    }
}

/// The slowest contribution to the root of Open MPI's in-order binary tree of `n` processes in
/// a reduction: the root `n - 1` has the left child `n - 2` over the `n - 1 - R` processes
/// above the right subtree, and for `n >= 3` the right child `R - 1` over `R = ⌊n/2⌋`; it
/// absorbs the left child first, so the left one waits for its sibling:
/// `F(n) = max(F(n - 1 - R) + hop + [R > 0] wait, F(R) + hop)`, `F(1) = 0`.
///
/// The two subtrees of a subtree of `s >= 3` processes hold `⌈s/2⌉ - 1` and `⌊s/2⌋`: the sizes
/// one level down from `{b, b + 1}` lie in `{⌈b/2⌉ - 1, ⌈b/2⌉}`. The walk goes down the bases
/// `b` to a subtree of at most 3 processes and comes back up with `F(b)` and `F(b + 1)`: `O(log
/// n)`, no allocation.
fn in_order_fan_in(n: u64, hop: f64, wait: f64) -> f64 {
    // F of subtrees of at most 3 processes: one child costs a hop, two a hop and a wait
    let small = |s: u64| match s {
        0 | 1 => 0.0,
        2 => hop,
        _ => hop + wait,
    };
    let mut bases = [0u64; 66];
    bases[0] = n;
    let mut depth = 0;
    while bases[depth] > 2 && depth + 1 < bases.len() {
        bases[depth + 1] = bases[depth].div_ceil(2) - 1;
        depth += 1;
    }
    // (F(b), F(b + 1)) at the level walked back up to
    let mut pair = (small(bases[depth]), small(bases[depth] + 1));
    for d in (0..depth).rev() {
        let below = bases[d + 1];
        let at = |x: u64| if x == below { pair.0 } else { pair.1 };
        let f = |s: u64| {
            if s <= 3 {
                return small(s);
            }
            let right = s / 2;
            let left = s - 1 - right;
            (at(left) + hop + wait).max(at(right) + hop)
        };
        // `b + 1` saturates at `u64::MAX`, where only `F(b)` is asked for
        pair = (f(bases[d]), f(bases[d].saturating_add(1)));
    }
    pair.0
}

/// The slowest contribution to the root of Open MPI's in-order binomial tree of `n`
/// processes in a reduction. A full subtree of `2^t` processes has children of full subtrees
/// `2^j`, `j < t`: `B(t) = max_j B(j) + hop + (t - 1 - j) wait`, `B(0) = 0`. A subtree of `n`
/// processes has `k = ⌈log2 n⌉` children, all full but possibly the last, of `n - 2^(k-1)`:
/// `F(n) = max(max_{j < k-1} B(j) + hop + (k - 1 - j) wait, F(n - 2^(k-1)) + hop)`, `F(1) = 0`.
/// With the prefix maxima `C(t) = max_{j<t} (B(j) - j wait)`, `B(t) = C(t) + hop + (t - 1) wait`
/// and a level's full children give `C(k - 1) + hop + (k - 1) wait`: `O(log n)`.
fn in_order_binomial_fan_in(n: u64, hop: f64, wait: f64) -> f64 {
    // prefix[t] = C(t) (no child below t = 0); B(t) from it
    let mut prefix = [f64::NEG_INFINITY; 66];
    let mut full = 0.0f64;
    let h = ceil_log2(n.max(1)) as usize;
    for t in 0..h.min(64) {
        // full = B(t)
        prefix[t + 1] = prefix[t].max(full - t as f64 * wait);
        full = prefix[t + 1] + hop + t as f64 * wait;
    }
    let mut answer: f64 = 0.0;
    // the path down the partial subtrees: `above` is the time its hops add on the way up
    let mut above = 0.0;
    let mut rest = n;
    while rest > 1 {
        let k = ceil_log2(rest) as usize;
        answer = answer.max(above + prefix[k - 1] + hop + (k - 1) as f64 * wait);
        above += hop;
        rest -= 1u64 << (k - 1);
    }
    answer.max(above)
}

/// The base-`radix` digits of `n`, lowest first, and how many there are (`⌈log_r (n + 1)⌉`,
/// at most 64; `radix >= 2`): shifts and masks for a power-of-two radix.
fn base_digits(radix: u64, n: u64) -> ([u64; 64], usize) {
    let mut digits = [0u64; 64];
    let mut d = 0;
    let mut rest = n;
    let radix = radix.max(2);
    let shift = radix.is_power_of_two().then(|| radix.trailing_zeros());
    while rest > 0 && d < digits.len() {
        match shift {
            Some(s) => {
                digits[d] = rest & (radix - 1);
                rest = rest.checked_shr(s).unwrap_or(0);
            }
            None => {
                digits[d] = rest % radix;
                rest /= radix;
            }
        }
        d += 1;
    }
    (digits, d)
}

/// `⌈log_r P⌉`: the number of powers `1, r, r², …` below `P` (at most 64).
#[cfg(test)]
fn knomial_digits(radix: u64, p: u64) -> u32 {
    let mut digits = 0;
    let mut power = 1u64;
    while power < p {
        digits += 1;
        power = power.saturating_mul(radix);
        if power == u64::MAX {
            break;
        }
    }
    digits
}

/// The slowest first-segment arrival in a k-nomial tree, exactly as Open MPI builds it.
///
/// Process `v` with base-`r` digits (`d` of them; `N = P - 1`) is reached from the root through
/// its non-zero digits, highest first: ancestor `u_i` adds digit `c_i` at position `j_i`. A
/// parent whose lowest non-zero digit is at `e` (the root: `e = d`) lists its children from the
/// largest subtree down — for `j' = e-1, …, 0` and `c' = 1, …, r-1` the child `u + c' r^j'`
/// when it is below `P` — so child `(j, c)` waits for `Σ_{j<j'<e} cnt(u, j') + c - 1` earlier
/// siblings, with `cnt(u, j') = r - 1` when `u`'s digits above `e` are below `N`'s, and
/// `min(r - 1, ⌊(N mod r^e) / r^j'⌋)` when they equal them. Only the digits `N_j`, `N_j - 1`,
/// `r - 1` and 0 can be best (a larger digit only adds waits), so a digit walk from the top
/// keeps three latest arrivals:
///
/// * the prefix equal to `N`'s (its digits between `e` and `j` are 0, so its children wait
///   only for their own `c - 1` siblings);
/// * a parent equal to `N`'s prefix, the prefix below it (a 0 where `N` has its first non-zero
///   digit `k < e`): `Σ_{j<j'<e} cnt = N_k + (r-1)(k-1) - (r-1) j`;
/// * a parent below `N`'s prefix: `Σ_{j<j'<e} cnt = (r-1)(e-1) - (r-1) j`.
///
/// In the last two the waits are `A - (r-1) j` with `A` fixed when the state is entered, so
/// the states of every `e` merge into one maximum of `arrival + A · wait`: `O(d)`, one pass
/// over the digits of `N`.
fn knomial_arrival(radix: u64, p: u64, hop: f64, wait: f64) -> f64 {
    let (digits, d) = base_digits(radix, p.saturating_sub(1));
    let r1 = radix.saturating_sub(1) as f64;
    let r2 = radix.saturating_sub(2) as f64;
    let raise = |acc: Option<f64>, x: f64| Some(acc.map_or(x, |a| a.max(x)));
    let mut answer: f64 = 0.0;
    // the node N's prefix reaches, and the merged maxima of `arrival + A · wait`
    let mut equal = 0.0;
    let mut parent_equal: Option<f64> = None;
    let mut below: Option<f64> = None;
    for j in (0..d).rev() {
        let nj = digits[j];
        let jf = j as f64;
        // a digit 0 keeps every state; a non-zero digit under a parent-equal or a smaller
        // parent is best as r - 1, a child of a smaller parent at level j
        let mut next_parent_equal = parent_equal;
        let mut next_below = below;
        for acc in [parent_equal, below].into_iter().flatten() {
            let arrival = acc + hop + (r2 - r1 * jf) * wait;
            answer = answer.max(arrival);
            next_below = raise(next_below, arrival + r1 * (jf - 1.0) * wait);
        }
        if nj >= 1 {
            let base = equal + hop;
            if nj >= 2 {
                let arrival = base + (nj - 2) as f64 * wait;
                answer = answer.max(arrival);
                next_below = raise(next_below, arrival + r1 * (jf - 1.0) * wait);
            }
            // a 0 where N has its first non-zero digit below the parent: k = j
            next_parent_equal = raise(
                next_parent_equal,
                equal + (nj as f64 + r1 * (jf - 1.0)) * wait,
            );
            equal = base + (nj - 1) as f64 * wait;
            answer = answer.max(equal);
        }
        parent_equal = next_parent_equal;
        below = next_below;
    }
    answer
}

/// A segmented broadcast over `shape` (module docs, "Segmented trees").
pub(super) fn bcast_tree(pieces: &mut Pieces<'_>, m: u64, segment: u64, shape: &Shape) -> f64 {
    let s = if segment == 0 || segment >= m {
        m
    } else {
        segment
    };
    let q = if s == 0 { 1 } else { m.div_ceil(s) };
    let t = pieces.quantities(s);
    let (root_k, inner_k) = shape.fanouts();
    let first = shape.first_arrival(t.p2p, t.send_interval);
    let step = (root_k as f64 * t.send_interval)
        .max(inner_k as f64 * t.send_interval)
        .max(t.recv_overhead + inner_k as f64 * t.send_overhead);
    first + (q - 1) as f64 * step
}

/// A segmented reduction over `shape` (module docs, "Segmented trees").
pub(super) fn reduce_tree(pieces: &mut Pieces<'_>, m: u64, segment: u64, shape: &Shape) -> f64 {
    let s = if segment == 0 || segment >= m {
        m
    } else {
        segment
    };
    let q = if s == 0 { 1 } else { m.div_ceil(s) };
    let t = pieces.quantities(s);
    let op = pieces.op(s);
    let (root_k, inner_k) = shape.fanouts();
    let absorb = t.recv_overhead + op;
    let first = shape.first_arrival(t.p2p + op, t.send_interval.max(absorb));
    // per segment a parent's receiving NIC takes its k children's segments, I apart, while
    // its CPU absorbs them (and an inner process sends the result up)
    let step = (root_k as f64 * absorb.max(t.send_interval))
        .max(inner_k as f64 * absorb + t.send_overhead)
        .max(inner_k as f64 * t.send_interval)
        .max(t.send_interval);
    first + (q - 1) as f64 * step
}

/// `(P - 1)` linear receptions at a root: `T(m) + (P - 2) max(I(m), or(m))`.
pub(super) fn linear_fan_in(pieces: &mut Pieces<'_>, m: u64, p: u64) -> f64 {
    let t = pieces.quantities(m);
    t.p2p + (p - 2) as f64 * t.send_interval.max(t.recv_overhead)
}

/// `(P - 1)` linear sends from a root: `T(m) + (P - 2) I(m)`.
pub(super) fn linear_fan_out(pieces: &mut Pieces<'_>, m: u64, p: u64) -> f64 {
    pieces.p2p(m) + (p - 2) as f64 * pieces.interval(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute force: the k-nomial tree built as Open MPI builds it, arrival times by walking it.
    fn knomial_brute(r: u64, p: u64, hop: f64, wait: f64) -> f64 {
        let d = knomial_digits(r, p);
        let mut arrival = vec![0.0f64; p as usize];
        // parents before children: process in increasing vrank order (a parent is smaller)
        for v in 0..p {
            // children of v: masks from r^(e-1) down, e = lowest non-zero digit position of v
            let mut e = d;
            let mut m = 1u64;
            for j in 0..d {
                if v % (m * r) != 0 {
                    e = j;
                    break;
                }
                m *= r;
            }
            let mut index = 0u64;
            for j in (0..e).rev() {
                for c in 1..r {
                    // as Open MPI: a child beyond P is not in the list
                    let child = v + c * r.pow(j);
                    if child < p {
                        arrival[child as usize] = arrival[v as usize] + hop + index as f64 * wait;
                        index += 1;
                    }
                }
            }
        }
        arrival.into_iter().fold(0.0, f64::max)
    }

    #[test]
    fn knomial_dp_matches_the_walk_on_powers_of_the_radix() {
        for r in 2..6u64 {
            for d in 1..5u32 {
                let p = r.pow(d);
                for (hop, wait) in [(1.0, 0.1), (1.0, 0.9), (0.2, 1.0)] {
                    let a = knomial_arrival(r, p, hop, wait);
                    let b = knomial_brute(r, p, hop, wait);
                    assert!((a - b).abs() < 1e-9, "r {r} p {p}: {a} vs {b}");
                }
            }
        }
    }

    #[test]
    fn knomial_fanouts_count_the_children_open_mpi_lists() {
        for r in 2..9u64 {
            for p in 2..400u64 {
                let d = knomial_digits(r, p);
                // children of v whose lowest non-zero digit is at e: v + c r^j < P, j < e
                let count = |v: u64, e: u32| {
                    (0..e)
                        .flat_map(|j| (1..r).map(move |c| v + c * r.pow(j)))
                        .filter(|&child| child < p)
                        .count() as u64
                };
                let root = count(0, d);
                let inner = count(r.pow(d - 1), d - 1);
                assert_eq!(Shape::knomial(r, p).fanouts(), (root, inner), "r {r} p {p}");
            }
        }
    }

    #[test]
    fn knomial_dp_matches_the_walk_on_every_size() {
        for r in 2..7u64 {
            for p in 2..300u64 {
                for (hop, wait) in [(1.0, 0.1), (1.0, 0.9), (0.2, 1.0), (1.0, 0.0)] {
                    let a = knomial_arrival(r, p, hop, wait);
                    let b = knomial_brute(r, p, hop, wait);
                    assert!((a - b).abs() < 1e-9, "r {r} p {p}: {a} vs {b}");
                }
            }
        }
    }

    /// Brute force over Open MPI's trees as `coll_base_topo.c` builds them.
    fn paths_brute(children: impl Fn(u64) -> Vec<u64>, p: u64, hop: f64, wait: f64) -> f64 {
        let mut arrival = vec![f64::NAN; p as usize];
        arrival[0] = 0.0;
        let mut stack = vec![0u64];
        while let Some(v) = stack.pop() {
            for (i, c) in children(v).into_iter().enumerate() {
                arrival[c as usize] = arrival[v as usize] + hop + i as f64 * wait;
                stack.push(c);
            }
        }
        arrival.into_iter().fold(0.0, f64::max)
    }

    #[test]
    fn binomial_and_binary_paths_match_the_trees() {
        for p in 2..300u64 {
            let bm = |v: u64| {
                let mut mask = if v == 0 { 1 } else { v.next_power_of_two() };
                if v.is_power_of_two() {
                    mask = v << 1;
                }
                let mut out = vec![];
                while mask < p {
                    let remote = v ^ mask;
                    if remote >= p {
                        break;
                    }
                    out.push(remote);
                    mask <<= 1;
                }
                out
            };
            let bin = |v: u64| {
                let level = 63 - (v + 1).leading_zeros();
                let delta = 1u64 << level;
                [v + delta, v + 2 * delta]
                    .into_iter()
                    .filter(|&c| c < p)
                    .collect::<Vec<_>>()
            };
            for (hop, wait) in [(1.0, 0.1), (1.0, 0.9), (0.2, 1.0)] {
                let closed = Shape::binomial(p).first_arrival(hop, wait);
                let brute = paths_brute(bm, p, hop, wait);
                assert!(
                    (closed - brute).abs() < 1e-9,
                    "binomial p {p}: {closed} vs {brute}"
                );
                let closed = Shape::binary(p).first_arrival(hop, wait);
                let brute = paths_brute(bin, p, hop, wait);
                assert!(
                    (closed - brute).abs() < 1e-9,
                    "binary p {p}: {closed} vs {brute}"
                );
            }
        }
    }

    /// `coll_base_topo.c`'s chain: `f` chains, the first `(P - 1) mod f` one longer.
    fn chain_children(f: u64, p: u64) -> impl Fn(u64) -> Vec<u64> {
        let f = f.clamp(1, MAX_TREE_FANOUT).min(p - 1).max(1);
        let n = p - 1;
        let (len, mark) = if n.is_multiple_of(f) {
            (n / f, f + 1)
        } else {
            (n / f + 1, n % f)
        };
        let mut heads = vec![];
        let mut ends = vec![];
        let mut head = 1;
        for i in 0..f {
            let l = if i < mark { len } else { len - 1 };
            if l > 0 {
                heads.push(head);
                ends.push(head + l - 1);
                head += l;
            }
        }
        move |v| {
            if v == 0 {
                heads.clone()
            } else if ends.contains(&v) || v + 1 >= p {
                vec![]
            } else {
                vec![v + 1]
            }
        }
    }

    /// Brute force of a reduction over a tree whose parents absorb children in list order:
    /// `F(v) = max_i F(c_i) + hop + (k - 1 - i) wait`.
    fn fan_in_brute(children: impl Fn(u64) -> Vec<u64>, v: u64, hop: f64, wait: f64) -> f64 {
        fn walk(children: &dyn Fn(u64) -> Vec<u64>, v: u64, hop: f64, wait: f64) -> f64 {
            let kids = children(v);
            let k = kids.len();
            kids.iter()
                .enumerate()
                .map(|(i, &c)| walk(children, c, hop, wait) + hop + (k - 1 - i) as f64 * wait)
                .fold(0.0, f64::max)
        }
        walk(&children, v, hop, wait)
    }

    /// `coll_base_topo.c`'s in-order binary tree, children of `rank` (signed, as Open MPI).
    fn in_order_children(p: u64) -> impl Fn(u64) -> Vec<u64> {
        move |rank| {
            let (mut size, mut me, mut parent, mut delta) =
                (p as i64, rank as i64, p as i64 - 1, 0);
            loop {
                let rightsize = size >> 1;
                let l = if size > 1 { parent - 1 } else { -1 };
                let r = if l > 0 { rightsize - 1 } else { -1 };
                if me == parent {
                    return [l, r]
                        .into_iter()
                        .filter(|&c| c >= 0)
                        .map(|c| (c + delta) as u64)
                        .collect();
                }
                if me > r {
                    size = size - rightsize - 1;
                    delta += rightsize;
                    me -= rightsize;
                    parent = size - 1;
                } else {
                    size = rightsize;
                    parent = r;
                }
            }
        }
    }

    #[test]
    fn in_order_fan_in_matches_the_tree() {
        for p in 2..400u64 {
            for (hop, wait) in [(1.0, 0.1), (1.0, 0.9), (0.2, 1.0), (1.0, 0.0)] {
                let closed = Shape::in_order_fan_in(p).first_arrival(hop, wait);
                let brute = fan_in_brute(in_order_children(p), p - 1, hop, wait);
                assert!((closed - brute).abs() < 1e-9, "p {p}: {closed} vs {brute}");
            }
            // the fan-outs: the root's, and the most of any other process
            let kids = in_order_children(p);
            let root = kids(p - 1).len() as u64;
            let inner = (0..p - 1).map(|v| kids(v).len() as u64).max().unwrap_or(0);
            assert_eq!(Shape::in_order_fan_in(p).fanouts(), (root, inner), "p {p}");
        }
        // `2^k - 1` processes: two subtrees of `2^(k-1) - 1` under the root, `k - 1` hops deep
        for k in [20u32, 40, 64] {
            let p = u64::MAX >> (64 - k);
            let closed = Shape::in_order_fan_in(p).first_arrival(1.0, 0.0);
            assert!((closed - f64::from(k - 1)).abs() < 1e-12, "k {k}: {closed}");
        }
    }

    #[test]
    fn chain_paths_match_the_chain() {
        for p in 2..120u64 {
            for f in [1, 2, 3, 4, 5, 8, 40] {
                for (hop, wait) in [(1.0, 0.1), (1.0, 0.9), (0.2, 1.0)] {
                    let closed = Shape::chain(f, p).first_arrival(hop, wait);
                    let brute = paths_brute(chain_children(f, p), p, hop, wait);
                    assert!((closed - brute).abs() < 1e-9, "chain f {f} p {p}");
                    let closed = Shape::chain_fan_in(f, p).first_arrival(hop, wait);
                    let brute = fan_in_brute(chain_children(f, p), 0, hop, wait);
                    assert!((closed - brute).abs() < 1e-9, "chain fan-in f {f} p {p}");
                }
            }
        }
    }

    #[test]
    fn fan_in_paths_match_the_trees() {
        for p in 2..300u64 {
            // coll_base_topo.c's in-order bmtree: vrank ^ mask, the parent at the first
            // smaller one
            let in_order_bm = move |v: u64| {
                let mut out = vec![];
                let mut mask = 1u64;
                while mask < p {
                    let remote = v ^ mask;
                    if remote < v {
                        break;
                    } else if remote < p {
                        out.push(remote);
                    }
                    mask <<= 1;
                }
                out
            };
            let bin = move |v: u64| {
                let level = 63 - (v + 1).leading_zeros();
                let delta = 1u64 << level;
                [v + delta, v + 2 * delta]
                    .into_iter()
                    .filter(|&c| c < p)
                    .collect::<Vec<_>>()
            };
            for (hop, wait) in [(1.0, 0.1), (1.0, 0.9), (1.0, 1.0), (0.2, 1.0), (1.0, 0.0)] {
                let closed = Shape::in_order_binomial_fan_in(p).first_arrival(hop, wait);
                let brute = fan_in_brute(in_order_bm, 0, hop, wait);
                assert!(
                    (closed - brute).abs() < 1e-9,
                    "in-order binomial p {p}: {closed} vs {brute}"
                );
            }
            // hop >= wait: the slowest path takes every hop it can
            for (hop, wait) in [(1.0, 0.1), (1.0, 0.9), (1.0, 1.0)] {
                let closed = Shape::binary_fan_in(p).first_arrival(hop, wait);
                let brute = fan_in_brute(bin, 0, hop, wait);
                assert!(
                    (closed - brute).abs() < 1e-9,
                    "binary p {p}: {closed} vs {brute}"
                );
            }
            // the fan-outs: the root's, and the most of any other process
            let root = in_order_bm(0).len() as u64;
            let inner = (1..p)
                .map(|v| in_order_bm(v).len() as u64)
                .max()
                .unwrap_or(0);
            assert_eq!(
                Shape::in_order_binomial_fan_in(p).fanouts(),
                (root, inner),
                "p {p}"
            );
        }
    }
}
