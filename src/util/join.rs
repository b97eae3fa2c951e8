//! Two computations at once: the second on a scoped thread of its own, the first on the
//! calling thread (both on the calling thread without the `parallel` feature, when no thread
//! can be started, or when the work is too small to be worth a thread: a new thread allocates
//! from a new heap, whose pages are touched anew).

use std::sync::Mutex;

/// Operations from which a schedule's passes run on two threads (below, the thread costs
/// more than it saves).
pub(crate) const PARALLEL_FROM_OPERATIONS: usize = 1 << 16;

/// Whether the crate may start threads: the `parallel` feature.
pub(crate) const THREADS: bool = cfg!(feature = "parallel");

/// Runs `a` and `b` at once when `parallel` and the crate may start threads ([`THREADS`]),
/// else one after the other, and returns both results; a panic in either is resumed on the
/// calling thread, as if they had run one after the other.
pub(crate) fn join<A: Send, B: Send>(
    parallel: bool,
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    if !(parallel && THREADS) {
        let ra = a();
        return (ra, b());
    }
    // `b` waits here until a thread takes it, or this one when none could be started
    let slot = Mutex::new(Some(b));
    // the lock is held only to move the closure out, which cannot panic; a poisoned lock is
    // taken all the same, so that `b` is found wherever it still is
    let take = || {
        slot.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    };
    std::thread::scope(|s| {
        let other = std::thread::Builder::new()
            .spawn_scoped(s, || take().map(|f| f()))
            .ok();
        let ra = a();
        let rb = match other.map(std::thread::ScopedJoinHandle::join) {
            Some(Ok(Some(rb))) => rb,
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            // no thread (or it found nothing to run): `b` here
            _ => match take() {
                Some(f) => f(),
                // only the thread that took `b` leaves the slot empty, and it returned above
                None => unreachable!("`b` runs exactly once"),
            },
        };
        (ra, rb)
    })
}

#[cfg(test)]
mod tests {
    use super::join;

    #[test]
    fn both_results_in_their_places() {
        let v: Vec<u64> = (1..=1000).collect();
        let (a, b) = join(
            true,
            || v.iter().sum::<u64>(),
            || v.iter().filter(|x| *x % 2 == 0).count(),
        );
        assert_eq!((a, b), (500_500, 500));
        let (c, d) = join(false, || 1, || 2);
        assert_eq!((c, d), (1, 2));
    }
}
