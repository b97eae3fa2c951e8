//! The graph passes of [`build`](super::ScheduleBuilder::build): the operations' order in
//! memory (time-major, ranks renumbered), the acyclicity check and the matching of sends to
//! receives.

use super::op::{KIND_RECV, KIND_SEND, NONE, START_EDGE, Signature};
use crate::Message;
use crate::sim::SimError;

/// Numbers the ranks in the order their first operation appears in internal order (ranks
/// without operations last), so that the ranks whose operations lie together in memory have
/// their simulation state together too; returns the operations' ranks so numbered and the map
/// from that number to the rank (empty when it is the identity, as for every schedule whose
/// first round visits the ranks in order).
pub(super) fn renumber_ranks(mut rank: Vec<u32>, ranks: usize) -> (Vec<u32>, Vec<u32>) {
    let mut number = vec![NONE; ranks];
    let mut next = 0u32;
    for &r in &rank {
        let x = &mut number[r as usize];
        if *x == NONE {
            *x = next;
            next += 1;
        }
    }
    for x in &mut number {
        if *x == NONE {
            *x = next;
            next += 1;
        }
    }
    if number.iter().enumerate().all(|(r, &x)| x as usize == r) {
        return (rank, Vec::new());
    }
    for r in &mut rank {
        *r = number[*r as usize];
    }
    let mut rank_of = vec![0u32; ranks];
    for (r, &x) in number.iter().enumerate() {
        rank_of[x as usize] = r as u32;
    }
    (rank, rank_of)
}

/// The time-major order of the operations: by position in their rank's program, then by
/// operation index, so that the operations a lock-step collective runs at one time lie next
/// to each other. `index[op]` is the internal position of `op`, `orig` its inverse; both are
/// empty when that order is the operations' own.
#[derive(Debug)]
pub(super) struct TimeMajor {
    pub(super) index: Vec<u32>,
    pub(super) orig: Vec<u32>,
    /// `(first operation, length)` of each rank's operations when each rank's are one run
    /// (as a GOAL file's rank blocks give them), in operation order; else empty.
    runs: Vec<(u32, u32)>,
}

/// Runs of ranks walked together in [`TimeMajor`]'s tiled passes: a position's operations of
/// 16 runs fill one cache line of an array of `u32` in internal order.
const BAND: usize = 16;

impl TimeMajor {
    /// The order of the operations of ranks `rank` (each below `ranks`).
    pub(super) fn new(rank: &[u32], ranks: usize) -> Self {
        match rank_runs(rank, ranks) {
            Some(runs) => Self::of_runs(runs, rank.len()),
            None => {
                let index = time_major(rank, ranks);
                let orig = invert(&index);
                Self {
                    index,
                    orig,
                    runs: Vec::new(),
                }
            }
        }
    }

    /// The order itself (no reordering).
    pub(super) fn identity() -> Self {
        Self {
            index: Vec::new(),
            orig: Vec::new(),
            runs: Vec::new(),
        }
    }

    /// The order of `n` operations that are one run per rank: the runs walked in bands of
    /// [`BAND`], a position at a time, so that the writes of each position land together
    /// (the same order as [`time_major`]'s counting sort: a position's operations in the order
    /// of their runs).
    fn of_runs(runs: Vec<(u32, u32)>, n: usize) -> Self {
        // already in that order when every run but the last is one operation long
        if runs.iter().rev().skip(1).all(|&(_, len)| len == 1) {
            return Self::identity();
        }
        let longest = runs.iter().map(|&(_, len)| len).max().unwrap_or(0) as usize;
        // where each position's operations start: `next[k]`, the number of operations at the
        // positions before `k`
        let mut next = vec![0u32; longest + 1];
        for &(_, len) in &runs {
            next[len as usize] += 1;
        }
        // the number of runs longer than k, for each k (from the longest down)
        let mut longer = 0u32;
        for k in (0..=longest).rev() {
            let ending_here = next[k];
            next[k] = longer;
            longer += ending_here;
        }
        let mut start = 0u32;
        for c in &mut next {
            let here = *c;
            *c = start;
            start += here;
        }
        let mut index = vec![0u32; n];
        let mut orig = vec![0u32; n];
        for_each_tiled(&runs, |k, e| {
            let slot = &mut next[k as usize];
            index[e] = *slot;
            orig[*slot as usize] = e as u32;
            *slot += 1;
        });
        Self { index, orig, runs }
    }

    /// Calls `f(internal position, operation)` on every operation when the order is not the
    /// identity: for one run per rank in tiles (each position's operations of a band of runs
    /// land together), else in internal order (a gather, which writes in order).
    fn for_each_placed(&self, mut f: impl FnMut(usize, usize)) {
        if self.runs.is_empty() {
            for (i, &e) in self.orig.iter().enumerate() {
                f(i, e as usize);
            }
        } else {
            for_each_tiled(&self.runs, |_, e| f(self.index[e] as usize, e));
        }
    }

    /// An array in internal order, each value mapped by `map` (`out[i] = map(v[orig[i]])`;
    /// `v` itself for the identity).
    fn permute_mapped(&self, v: Vec<u32>, map: impl Fn(u32) -> u32) -> Vec<u32> {
        if self.orig.is_empty() {
            return v;
        }
        let mut out = vec![0u32; v.len()];
        self.for_each_placed(|i, e| out[i] = map(v[e]));
        out
    }

    /// An array in internal order (`out[i] = v[orig[i]]`; itself for the identity).
    pub(super) fn permute(&self, v: Vec<u32>) -> Vec<u32> {
        self.permute_mapped(v, |x| x)
    }

    /// An array of operations (`NONE` for none) in internal order, each the internal position
    /// of its operation (`out[i] = index[v[orig[i]]]`; itself for the identity).
    pub(super) fn permute_positions(&self, v: Vec<u32>) -> Vec<u32> {
        self.permute_mapped(v, |x| {
            if x == NONE {
                NONE
            } else {
                self.index[x as usize]
            }
        })
    }

    /// Operations (a list in any order) as their internal positions, in the same order.
    pub(super) fn positions(&self, mut v: Vec<u32>) -> Vec<u32> {
        if !self.orig.is_empty() {
            for x in &mut v {
                *x = self.index[*x as usize];
            }
        }
        v
    }

    /// Lists of operations per operation (CSR: `successors[offsets[op]..offsets[op + 1]]`,
    /// each entry an operation `| START_EDGE` or not) in internal order, each entry the
    /// internal position of its operation, every list in its own order.
    pub(super) fn permute_lists(
        &self,
        offsets: Vec<u32>,
        successors: Vec<u32>,
    ) -> (Vec<u32>, Vec<u32>) {
        if self.orig.is_empty() {
            return (offsets, successors);
        }
        let n = self.orig.len();
        // each list's length at its internal position, then their running sums
        let mut out_offsets = vec![0u32; n + 1];
        self.for_each_placed(|i, e| out_offsets[i + 1] = offsets[e + 1] - offsets[e]);
        for i in 0..n {
            out_offsets[i + 1] += out_offsets[i];
        }
        let mut out = vec![0u32; successors.len()];
        self.for_each_placed(|i, e| {
            let (a, b) = (offsets[e] as usize, offsets[e + 1] as usize);
            let to = out_offsets[i] as usize;
            for (slot, &s) in out[to..to + (b - a)].iter_mut().zip(&successors[a..b]) {
                *slot = self.index[(s & !START_EDGE) as usize] | (s & START_EDGE);
            }
        });
        (out_offsets, out)
    }
}

/// Calls `f(position, operation)` on every operation of the runs: band after band of
/// [`BAND`] runs, within a band position after position, within a position run after run.
/// At most `BAND` steps per operation.
fn for_each_tiled(runs: &[(u32, u32)], mut f: impl FnMut(u32, usize)) {
    for band in runs.chunks(BAND) {
        let longest = band.iter().map(|&(_, len)| len).max().unwrap_or(0);
        for k in 0..longest {
            for &(start, len) in band {
                if k < len {
                    f(k, (start + k) as usize);
                }
            }
        }
    }
}

/// The runs `(first operation, length)` of the operations of one rank, in operation order,
/// when each rank's operations are one run; `None` otherwise.
fn rank_runs(rank: &[u32], ranks: usize) -> Option<Vec<(u32, u32)>> {
    let mut seen = vec![false; ranks];
    let mut runs = Vec::new();
    let mut i = 0;
    while i < rank.len() {
        let (r, start) = (rank[i], i);
        while rank.get(i) == Some(&r) {
            i += 1;
        }
        if std::mem::replace(&mut seen[r as usize], true) {
            return None;
        }
        runs.push((start as u32, (i - start) as u32));
    }
    Some(runs)
}

/// [`TimeMajor`]'s order of operations in any order of ranks, by a counting sort. Returns
/// `index[op]`, the internal position of `op`; empty when that order is the operations' own.
fn time_major(rank: &[u32], ranks: usize) -> Vec<u32> {
    let n = rank.len();
    // position of each operation in its rank's program, and how many operations each
    // position has
    let mut next = vec![0u32; ranks];
    let mut pos = vec![0u32; n];
    let mut count: Vec<u32> = Vec::new();
    for (i, &r) in rank.iter().enumerate() {
        let k = next[r as usize];
        next[r as usize] += 1;
        pos[i] = k;
        if k as usize == count.len() {
            count.push(0);
        }
        count[k as usize] += 1;
    }
    drop(next);
    // already in that order when positions never go down
    if pos.is_sorted() {
        return Vec::new();
    }
    let mut start = 0u32;
    for c in count.iter_mut() {
        let here = *c;
        *c = start;
        start += here;
    }
    for k in pos.iter_mut() {
        let slot = &mut count[*k as usize];
        *k = *slot;
        *slot += 1;
    }
    pos
}

/// The inverse of a permutation (empty for the identity).
pub(super) fn invert(index: &[u32]) -> Vec<u32> {
    let mut orig = vec![0u32; index.len()];
    for (e, &i) in index.iter().enumerate() {
        orig[i as usize] = e as u32;
    }
    orig
}

/// Kahn's algorithm over all operations: every operation must be reachable in a topological
/// order, else the rest lie on or behind a cycle.
///
/// All arrays in operation order; the error names the first operation left over.
pub(super) fn check_acyclic(
    offsets: &[u32],
    successors: &[u32],
    rank: &[u32],
) -> Result<(), SimError> {
    let n = rank.len();
    let mut indegree = vec![0u32; n];
    for &s in successors {
        indegree[(s & !START_EDGE) as usize] += 1;
    }
    // a queue (first in, first out) walks the operations round by round, in memory order
    let mut queue: Vec<u32> = (0..n as u32)
        .filter(|&i| indegree[i as usize] == 0)
        .collect();
    let mut seen = 0usize;
    while seen < queue.len() {
        let op = queue[seen];
        seen += 1;
        let (a, b) = (offsets[op as usize], offsets[op as usize + 1]);
        for &s in &successors[a as usize..b as usize] {
            let t = (s & !START_EDGE) as usize;
            indegree[t] -= 1;
            if indegree[t] == 0 {
                queue.push(t as u32);
            }
        }
    }
    if seen < n {
        let i = (0..n).find(|&i| indegree[i] > 0).unwrap_or(0);
        return Err(SimError::Cycle {
            rank: u64::from(rank[i]),
            op: i as u64,
        });
    }
    Ok(())
}

/// Pairs every send with a receive: the `k`-th send from `a` to `b` with tag `t` (in operation
/// order) matches the `k`-th receive at `b` from `a` with tag `t`.
///
/// Sends and receives are bucketed by source rank (a counting sort, 4 bytes per operation),
/// each bucket sorted by (destination, tag, operation): together the order of
/// (source, destination, tag, operation), walked in step over sends and receives.
///
/// The arrays are in operation order (any order that keeps each rank's operations in
/// operation order would do); every rank and peer is below `ranks`. Returns the partners.
pub(super) fn match_messages(
    sig: &[u32],
    signatures: &[Signature],
    rank: &[u32],
    peer: &[u32],
    messages: &[Message],
    ranks: usize,
) -> Result<Vec<u32>, SimError> {
    let kind = |i: usize| signatures[sig[i] as usize].kind;
    let tag = |i: usize| signatures[sig[i] as usize].tag;
    let class = |i: usize| signatures[sig[i] as usize].class;
    let n = sig.len();
    let src = |i: usize| -> usize {
        if kind(i) == KIND_SEND {
            rank[i] as usize
        } else {
            peer[i] as usize
        }
    };
    let dst = |i: usize| -> u32 {
        if kind(i) == KIND_SEND {
            peer[i]
        } else {
            rank[i]
        }
    };
    // operations of kind `k` bucketed by source, each bucket in (destination, tag, op) order,
    // with their keys `destination << 32 | tag` beside them (read in order when merging),
    // and where each source's bucket starts
    let key = |i: usize| (u64::from(dst(i)) << 32) | u64::from(tag(i));
    let bucket = |k: u8| -> (Vec<u32>, Vec<u64>, Vec<u32>) {
        let mut start = vec![0u32; ranks + 1];
        for i in 0..n {
            if kind(i) == k {
                start[src(i) + 1] += 1;
            }
        }
        for r in 0..ranks {
            start[r + 1] += start[r];
        }
        let mut fill = start[..ranks].to_vec();
        let mut ops = vec![0u32; start[ranks] as usize];
        let mut keys = vec![0u64; start[ranks] as usize];
        for i in 0..n {
            if kind(i) == k {
                let slot = &mut fill[src(i)];
                ops[*slot as usize] = i as u32;
                keys[*slot as usize] = key(i);
                *slot += 1;
            }
        }
        drop(fill);
        let mut keyed: Vec<(u64, u32)> = Vec::new();
        for r in 0..ranks {
            let range = start[r] as usize..start[r + 1] as usize;
            // already in operation order: sorting is needed only when (dst, tag) goes down
            if !keys[range.clone()].is_sorted() {
                // (key, position) pairs are distinct, so an unstable sort keeps equal keys in
                // operation order
                keyed.clear();
                keyed.extend(
                    keys[range.clone()]
                        .iter()
                        .copied()
                        .zip(ops[range.clone()].iter().copied()),
                );
                keyed.sort_unstable();
                for ((k, i), &(key, op)) in keys[range.clone()]
                    .iter_mut()
                    .zip(&mut ops[range.clone()])
                    .zip(&keyed)
                {
                    *k = key;
                    *i = op;
                }
            }
        }
        (ops, keys, start)
    };
    // the sends on one thread, the receives on another
    let ((sends, send_keys, send_start), (recvs, recv_keys, recv_start)) = crate::util::join::join(
        n >= crate::util::join::PARALLEL_FROM_OPERATIONS,
        || bucket(KIND_SEND),
        || bucket(KIND_RECV),
    );
    let mut partner = vec![NONE; n];
    let unmatched = |i: usize| {
        let send = kind(i) == KIND_SEND;
        SimError::Unmatched {
            kind: if send { "send" } else { "recv" },
            op: i as u64,
            rank: u64::from(rank[i]),
            peer: u64::from(peer[i]),
            tag: u64::from(tag(i)),
            missing: if send { "recv" } else { "send" },
        }
    };
    // merged source by source: in (source, destination, tag, op) order, as one merge of the
    // whole lists would (an operation left over in a source's bucket is unmatched)
    for r in 0..ranks {
        let (mut a, a_end) = (send_start[r] as usize, send_start[r + 1] as usize);
        let (mut b, b_end) = (recv_start[r] as usize, recv_start[r + 1] as usize);
        while a < a_end || b < b_end {
            if a == a_end {
                return Err(unmatched(recvs[b] as usize));
            }
            if b == b_end {
                return Err(unmatched(sends[a] as usize));
            }
            let (s, v) = (sends[a] as usize, recvs[b] as usize);
            match send_keys[a].cmp(&recv_keys[b]) {
                std::cmp::Ordering::Less => return Err(unmatched(s)),
                std::cmp::Ordering::Greater => return Err(unmatched(v)),
                std::cmp::Ordering::Equal => {
                    let (sb, rb) = (
                        messages[class(s) as usize].bytes(),
                        messages[class(v) as usize].bytes(),
                    );
                    if sb != rb {
                        return Err(SimError::SizeMismatch {
                            send: s as u64,
                            send_bytes: sb,
                            recv: v as u64,
                            recv_bytes: rb,
                        });
                    }
                    partner[s] = v as u32;
                    partner[v] = s as u32;
                    a += 1;
                    b += 1;
                }
            }
        }
    }
    Ok(partner)
}

#[cfg(test)]
mod tests {
    use super::{NONE, START_EDGE, TimeMajor, invert, time_major};

    /// The definition: `out[i] = v[orig[i]]`.
    fn permute(v: Vec<u32>, orig: &[u32]) -> Vec<u32> {
        orig.iter().map(|&e| v[e as usize]).collect()
    }

    /// The ranks of operations given as one run per rank: `(rank, length)` in order.
    fn runs(layout: &[(u32, u32)]) -> Vec<u32> {
        layout
            .iter()
            .flat_map(|&(r, len)| std::iter::repeat_n(r, len as usize))
            .collect()
    }

    /// Two ranks of three operations: positions 0 0 1 1 2 2 in internal order, by hand.
    #[test]
    fn two_runs_interleave() {
        let order = TimeMajor::new(&runs(&[(1, 3), (0, 3)]), 2);
        assert_eq!(order.orig, [0, 3, 1, 4, 2, 5]);
        assert_eq!(order.index, [0, 2, 4, 1, 3, 5]);
        assert_eq!(
            order.permute(vec![10, 11, 12, 20, 21, 22]),
            [10, 20, 11, 21, 12, 22]
        );
    }

    /// One run per rank, of lengths that differ (some longer than a band, ranks out of
    /// order, more runs than a band): the tiled passes give the counting sort's order and
    /// the gather's arrays.
    #[test]
    fn tiled_runs_equal_the_counting_sort() {
        let ranks = 53u32;
        let layout: Vec<(u32, u32)> = (0..ranks)
            .map(|i| ((i * 31) % ranks, 1 + (i * 7 + i * i) % 23))
            .collect();
        let rank = runs(&layout);
        let order = TimeMajor::new(&rank, ranks as usize);
        assert!(!order.runs.is_empty());
        let index = time_major(&rank, ranks as usize);
        assert_eq!(order.index, index);
        assert_eq!(order.orig, invert(&index));
        let values: Vec<u32> = (0..rank.len() as u32).map(|i| i * 3 + 1).collect();
        assert_eq!(
            order.permute(values.clone()),
            permute(values, &invert(&index))
        );
    }

    /// Positions and successor lists moved to internal order: by the tiled passes (one run
    /// per rank) and by the gather (ranks interleaved), against the definition written out
    /// with `orig` and `index` (`out[i]` is `index` of the entries of operation `orig[i]`).
    #[test]
    fn lists_and_partners_follow_the_order() {
        let ranks = 37u32;
        let layout: Vec<(u32, u32)> = (0..ranks)
            .map(|i| ((i * 11) % ranks, 1 + (i * 5 + i * i) % 19))
            .collect();
        let by_runs = runs(&layout);
        // ranks interleaved, not in time-major order
        let interleaved: Vec<u32> = (0..by_runs.len() as u32)
            .map(|i| ((i * i) % 41 + i / 50) % ranks)
            .collect();
        for (k, rank) in [by_runs, interleaved].into_iter().enumerate() {
            let n = rank.len();
            let order = TimeMajor::new(&rank, ranks as usize);
            assert!(!order.orig.is_empty());
            // the tiled passes for the runs, the gather for the interleaved ranks
            assert_eq!(order.runs.is_empty(), k == 1);
            // each operation's list: 0 to 3 other operations, some marked `START_EDGE`
            let lists: Vec<Vec<u32>> = (0..n)
                .map(|e| {
                    (0..(e * 13 % 4))
                        .map(|j| {
                            ((e * 17 + j * 29) % n) as u32 | if j == 1 { START_EDGE } else { 0 }
                        })
                        .collect()
                })
                .collect();
            let mut offsets = vec![0u32];
            let mut successors = Vec::new();
            for list in &lists {
                successors.extend_from_slice(list);
                offsets.push(successors.len() as u32);
            }
            let partner: Vec<u32> = (0..n as u32)
                .map(|e| {
                    if e % 5 == 0 {
                        NONE
                    } else {
                        (e * 23) % n as u32
                    }
                })
                .collect();
            let at = |s: u32| order.index[(s & !START_EDGE) as usize] | (s & START_EDGE);
            let (out_offsets, out) = order.permute_lists(offsets, successors);
            for (i, &e) in order.orig.iter().enumerate() {
                let got = &out[out_offsets[i] as usize..out_offsets[i + 1] as usize];
                let want: Vec<u32> = lists[e as usize].iter().map(|&s| at(s)).collect();
                assert_eq!(got, want, "position {i}");
            }
            let moved = order.permute_positions(partner.clone());
            for (i, &e) in order.orig.iter().enumerate() {
                let p = partner[e as usize];
                let want = if p == NONE {
                    NONE
                } else {
                    order.index[p as usize]
                };
                assert_eq!(moved[i], want, "position {i}");
            }
            let roots = vec![3, 1, 4, 1, 5];
            assert_eq!(
                order.positions(roots.clone()),
                roots
                    .iter()
                    .map(|&e| order.index[e as usize])
                    .collect::<Vec<_>>()
            );
        }
    }

    /// A rank in two runs: the counting sort (no runs).
    #[test]
    fn a_rank_in_two_runs_is_sorted_by_counting() {
        let rank = runs(&[(0, 2), (1, 3), (0, 1)]);
        let order = TimeMajor::new(&rank, 2);
        assert!(order.runs.is_empty());
        // positions 0 1 | 0 1 2 | 2
        assert_eq!(order.orig, [0, 2, 1, 3, 4, 5]);
    }

    /// Already time-major (every run but the last one operation long, or a single run):
    /// nothing to reorder.
    #[test]
    fn time_major_runs_need_no_order() {
        for layout in [&[(2, 1), (0, 1), (1, 5)][..], &[(0, 4)], &[]] {
            let order = TimeMajor::new(&runs(layout), 3);
            assert!(order.index.is_empty() && order.orig.is_empty());
            assert_eq!(order.permute(vec![7; 2]), [7, 7]);
        }
    }
}
