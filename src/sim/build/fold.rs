//! The foldings of the recursive algorithms for `P` not a power of two: MPICH's (the odd
//! ranks below `2 rem` stay) and Open MPI's Rabenseifner (the even ones stay).

use crate::util::bits::floor_log2;

/// The folding of MPICH's recursive algorithms for `P` not a power of two: `(rem, p')` with
/// `P = p' + rem`, and `newrank` of rank `r` (`None` for the even ranks below `2 rem`, which
/// hand their data over and wait).
pub(super) fn fold(p: u64, r: u64) -> (u64, u64, Option<u64>) {
    let pp = 1u64 << floor_log2(p);
    let rem = p - pp;
    let new = if r < 2 * rem {
        (r % 2 == 1).then_some(r / 2)
    } else {
        Some(r - rem)
    };
    (rem, pp, new)
}

/// The real rank of `newrank`.
pub(super) fn unfold(rem: u64, new: u64) -> u64 {
    if new < rem { 2 * new + 1 } else { new + rem }
}

// Open MPI folds its recursive algorithms for `P` not a power of two as MPICH does (`fold`,
// `unfold` of the textbook builders), but for Rabenseifner:

/// The folding of Open MPI's Rabenseifner algorithms (`coll_base_allreduce.c`,
/// `coll_base_reduce.c`): the *even* ranks below `2 rem` stay (`newrank = r/2`), the odd ones
/// hand over; `(rem, p', newrank)`.
pub(super) fn fold_even(p: u64, r: u64) -> (u64, u64, Option<u64>) {
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
pub(super) fn unfold_even(rem: u64, new: u64) -> u64 {
    if new < rem { 2 * new } else { new + rem }
}
