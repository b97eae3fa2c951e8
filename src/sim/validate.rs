//! The graph passes of [`build`](super::ScheduleBuilder::build): the operations' order in
//! memory (time-major, ranks renumbered), the acyclicity check and the matching of sends to
//! receives.

use super::op::{KIND_RECV, KIND_SEND, NONE, START_EDGE, Signature};
use crate::Message;
use crate::error::SimError;

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
/// to each other. Returns `index[op]`, the internal position of `op`; empty when that order is
/// the operations' own.
pub(super) fn time_major(rank: &[u32], ranks: usize) -> Vec<u32> {
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

/// An array in internal order (`out[i] = v[orig[i]]`; itself for the identity): a gather,
/// which writes in order (cheaper than a scatter).
pub(super) fn permute(v: Vec<u32>, orig: &[u32]) -> Vec<u32> {
    if orig.is_empty() {
        return v;
    }
    orig.iter().map(|&e| v[e as usize]).collect()
}

/// Kahn's algorithm over all operations: every operation must be reachable in a topological
/// order, else the rest lie on or behind a cycle.
///
/// All arrays in internal order (`orig`: internal position to operation index, empty for the
/// same); the error names the first operation (in operation order) left over.
pub(super) fn check_acyclic(
    offsets: &[u32],
    successors: &[u32],
    rank: &[u32],
    orig: &[u32],
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
        let ext = |i: usize| if orig.is_empty() { i } else { orig[i] as usize };
        let i = (0..n)
            .filter(|&i| indegree[i] > 0)
            .min_by_key(|&i| ext(i))
            .unwrap_or(0);
        return Err(SimError::Cycle {
            rank: u64::from(rank[i]),
            op: ext(i) as u64,
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
/// The arrays are in internal order, which keeps each rank's operations in operation order, so
/// "operation" can be the internal position; `orig` (internal position to operation index,
/// empty for the same) names operations in errors; every rank and peer is below `ranks`.
/// Returns the partners' internal positions.
pub(super) fn match_messages(
    sig: &[u32],
    signatures: &[Signature],
    rank: &[u32],
    peer: &[u32],
    messages: &[Message],
    orig: &[u32],
    ranks: usize,
) -> Result<Vec<u32>, SimError> {
    let kind = |i: usize| signatures[sig[i] as usize].kind;
    let tag = |i: usize| signatures[sig[i] as usize].tag;
    let class = |i: usize| signatures[sig[i] as usize].class;
    let ext = |i: usize| -> u64 {
        if orig.is_empty() {
            i as u64
        } else {
            u64::from(orig[i])
        }
    };
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
    let (sends, send_keys, send_start) = bucket(KIND_SEND);
    let (recvs, recv_keys, recv_start) = bucket(KIND_RECV);
    let mut partner = vec![NONE; n];
    let unmatched = |i: usize| {
        let send = kind(i) == KIND_SEND;
        SimError::Unmatched {
            kind: if send { "send" } else { "recv" },
            op: ext(i),
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
                            send: ext(s),
                            send_bytes: sb,
                            recv: ext(v),
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
