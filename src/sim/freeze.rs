//! Freezing a builder's operations into a [`Schedule`]: the list of dependencies (pairs and
//! groups, in the order they were added) checked and turned into successor lists, with the
//! graph passes of [`validate`](super::validate).

use super::layout::{Operations, Stored};
use super::op::{START_EDGE, Signature};
use super::schedule::Schedule;
use super::validate::{TimeMajor, check_acyclic, match_messages, renumber_ranks};
use crate::Message;
use crate::sim::SimError;
use crate::util::join::{PARALLEL_FROM_OPERATIONS, join};

/// Marks the two entries of a group of dependencies in the builder's list (operation indices
/// stay below `2^31`).
pub(super) const GROUP: u32 = 1 << 31;

/// What [`freeze`] takes from the builder: the operations in the order they were added.
pub(super) struct Parts {
    pub(super) ranks: u64,
    pub(super) sig: Vec<u32>,
    pub(super) signatures: Vec<Signature>,
    pub(super) rank: Vec<u32>,
    pub(super) peer: Vec<u32>,
    pub(super) messages: Vec<Message>,
    pub(super) calcs: Vec<f64>,
    pub(super) deps: Vec<(u32, u32)>,
    pub(super) dep_count: u64,
    pub(super) keep_order: bool,
}

/// Checks the dependencies (known operations, one rank each, no cycle), matches the messages
/// and builds the successor lists in operation order, then orders all of it in memory
/// (time-major).
pub(super) fn freeze(parts: Parts) -> Result<Schedule, SimError> {
    let Parts {
        ranks,
        sig,
        signatures,
        rank,
        peer,
        messages,
        calcs,
        deps,
        dep_count,
        keep_order,
    } = parts;
    let n = sig.len();
    let parallel = n >= PARALLEL_FROM_OPERATIONS;
    // the dependencies checked while the time-major order is computed (two threads)
    let (checked, order) = join(
        parallel,
        || check_dependencies(&deps, &rank, n),
        || {
            if keep_order {
                TimeMajor::identity()
            } else {
                TimeMajor::new(&rank, ranks as usize)
            }
        },
    );
    let forward = checked?;
    // the messages matched while the successor lists are made (two threads), in operation
    // order: each pass then walks a rank's operations together (in internal order it would
    // jump between ranks at every step)
    let (matched, (offsets, successors, roots)) = join(
        parallel,
        || match_messages(&sig, &signatures, &rank, &peer, &messages, ranks as usize),
        || successor_lists(deps, dep_count, n),
    );
    drop(peer);
    // a cycle is reported before an unmatched message; without a possible cycle (every
    // dependency on an earlier operation, as the collective builders add them) it is not
    // looked for
    if !forward {
        check_acyclic(&offsets, &successors, &rank)?;
    }
    let partner = matched?;
    // from here on every per-operation array is in internal order
    let ((sig, rank), (partner, (offsets, successors))) = join(
        parallel,
        || (order.permute(sig), order.permute(rank)),
        || {
            (
                order.permute_positions(partner),
                order.permute_lists(offsets, successors),
            )
        },
    );
    let roots = order.positions(roots);
    let TimeMajor { orig, .. } = order;
    let (rank, rank_of) = renumber_ranks(rank, ranks as usize);
    let start_edges = successors.iter().any(|&e| e & START_EDGE != 0);

    Ok(Schedule {
        ranks,
        operations: Operations::Stored(Stored {
            sig,
            rank,
            roots,
            partner,
            offsets,
            successors,
        }),
        signatures,
        rank_of,
        messages,
        calcs,
        // the inverse is rebuilt on the first question about an operation by its index:
        // a simulation needs only `orig`
        index: std::sync::OnceLock::new(),
        orig,
        start_edges,
    })
}

/// Checks that every dependency names known operations of one rank; whether every one is on
/// an earlier operation (then there is no cycle).
fn check_dependencies(deps: &[(u32, u32)], rank: &[u32], n: usize) -> Result<bool, SimError> {
    let mut forward = true;
    each_dependency(deps, |op, on| {
        let on = on & !START_EDGE;
        forward &= on < op;
        for id in [op, on] {
            if id as usize >= n {
                return Err(SimError::UnknownOperation {
                    op: u64::from(op),
                    on: u64::from(on),
                    ops: n as u64,
                });
            }
        }
        let (r1, r2) = (rank[op as usize], rank[on as usize]);
        if r1 != r2 {
            return Err(SimError::CrossRankDependency {
                op: u64::from(op),
                rank: u64::from(r1),
                on: u64::from(on),
                other_rank: u64::from(r2),
            });
        }
        Ok(())
    })?;
    Ok(forward)
}

/// The successor lists (CSR: `successors[offsets[op]..offsets[op + 1]]` the operations that
/// depend on `op`, each `| START_EDGE` for an `irequires`, in the order the dependencies were
/// added) and the operations without dependencies, ready at the start, in operation order.
fn successor_lists(
    deps: Vec<(u32, u32)>,
    dep_count: u64,
    n: usize,
) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    // one pass over the dependencies: note which operations have any, and count the
    // successors of each operation (edge on -> op) in `offsets[on + 1]`
    let mut offsets = vec![0u32; n + 1];
    let mut has_pred = vec![false; n];
    for_each_entry(&deps, false, |entry| match entry {
        Entry::Pair(op, on) => {
            has_pred[op as usize] = true;
            offsets[(on & !START_EDGE) as usize + 1] += 1;
        }
        Entry::Group(ops, on) => {
            for op in ops.clone() {
                has_pred[op as usize] = true;
            }
            for o in on {
                offsets[o as usize + 1] += ops.len() as u32;
            }
        }
    });
    let roots: Vec<u32> = (0..n as u32).filter(|&e| !has_pred[e as usize]).collect();
    drop(has_pred);
    // `offsets[i + 1]` becomes the end of `i`'s list; filling each list from its end with
    // the edges taken in reverse leaves `offsets[i]` at its start and the edges in the
    // order they were added (no second offset array)
    for i in 0..n {
        offsets[i + 1] += offsets[i];
    }
    let mut successors = vec![0u32; dep_count as usize];
    for_each_entry(&deps, true, |entry| match entry {
        Entry::Pair(op, on) => {
            let slot = &mut offsets[(on & !START_EDGE) as usize + 1];
            *slot -= 1;
            successors[*slot as usize] = op | (on & START_EDGE);
        }
        Entry::Group(ops, on) => {
            for op in ops.rev() {
                for o in on.clone().rev() {
                    let slot = &mut offsets[o as usize + 1];
                    *slot -= 1;
                    successors[*slot as usize] = op;
                }
            }
        }
    });
    drop(deps);
    offsets.rotate_left(1);
    offsets[n] = dep_count as u32;
    (offsets, successors, roots)
}

/// One entry of the builder's list of dependencies: a pair `(op, on | START_EDGE if
/// irequires)`, or a group (every operation of the first range requires every one of the
/// second).
enum Entry {
    Pair(u32, u32),
    Group(std::ops::Range<u32>, std::ops::Range<u32>),
}

/// Calls `f` on each entry of the builder's list of dependencies, in the order they were
/// added (`reverse`: the opposite order).
fn for_each_entry(deps: &[(u32, u32)], reverse: bool, mut f: impl FnMut(Entry)) {
    let entry = |i: usize| -> (Entry, usize) {
        let (a, b) = deps[i];
        if a & GROUP != 0 {
            let (c, d) = deps[i + 1];
            (Entry::Group(a & !GROUP..b, c & !GROUP..d), 2)
        } else {
            (Entry::Pair(a, b), 1)
        }
    };
    if reverse {
        let mut i = deps.len();
        while i > 0 {
            // the second entry of a group is marked too: its first is the one before
            let start = if deps[i - 1].0 & GROUP != 0 {
                i - 2
            } else {
                i - 1
            };
            f(entry(start).0);
            i = start;
        }
    } else {
        let mut i = 0;
        while i < deps.len() {
            let (e, len) = entry(i);
            f(e);
            i += len;
        }
    }
}

/// Calls `f(op, on | START_EDGE if irequires)` on every dependency, groups expanded, in the
/// order they were added; stops at the first error.
fn each_dependency(
    deps: &[(u32, u32)],
    mut f: impl FnMut(u32, u32) -> Result<(), SimError>,
) -> Result<(), SimError> {
    let mut result = Ok(());
    for_each_entry(deps, false, |e| {
        if result.is_err() {
            return;
        }
        result = match e {
            Entry::Pair(op, on) => f(op, on),
            Entry::Group(ops, on) => ops
                .flat_map(|op| on.clone().map(move |o| (op, o)))
                .try_for_each(|(op, o)| f(op, o)),
        };
    });
    result
}
