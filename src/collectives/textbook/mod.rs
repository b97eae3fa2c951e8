//! The textbook algorithms of each collective and their costs, one file per collective.
//!
//! Notation in the formulas: `m` the problem's message bytes, `P` processes, `h = ⌈log2 P⌉`,
//! `h' = ⌊log2 P⌋`, `p' = 2^h'`, `[np2]` 1 when `P` is not a power of two (else 0),
//! `T(x)`, `I(x)`, `g(x)`, `os(x)`, `or(x)` the model's `p2p`, `send_interval`, `gap`,
//! `send_overhead`, `recv_overhead` for a piece of `x` bytes, `op(x)` the operator.

/// `ALL`, the list of a collective's algorithms.
macro_rules! algorithm_list {
    ($ty:ident [$($variant:ident),* $(,)?]) => {
        impl $ty {
            /// Every algorithm of this collective.
            pub const ALL: &'static [$ty] = &[$($ty::$variant),*];
        }
    };
}
mod allgather;
mod allreduce;
mod alltoall;
mod barrier;
mod bcast;
mod gather;
mod names;
mod reduce;
mod scan;
mod scatter;

pub use allgather::Allgather;
pub use allreduce::Allreduce;
pub use alltoall::Alltoall;
pub use barrier::Barrier;
pub use bcast::Bcast;
pub use gather::Gather;
pub use names::MpichAlgorithm;
pub use reduce::Reduce;
pub use scan::Scan;
pub use scatter::Scatter;

use crate::collectives::{AlgorithmVisitor, Collective, CollectiveError, Family};

/// Calls `visitor.visit::<A>()` with `A` the textbook algorithm type of `collective`: the
/// textbook family's one table of types ([`Family::visit`](crate::collectives::Family::visit)
/// uses it).
///
/// # Errors
///
/// [`CollectiveError::NotPriced`] for a collective without textbook algorithms.
pub(crate) fn visit<V: AlgorithmVisitor>(
    collective: Collective,
    visitor: V,
) -> Result<V::Output, CollectiveError> {
    Ok(match collective {
        Collective::Allgather => visitor.visit::<Allgather>(),
        Collective::Allreduce => visitor.visit::<Allreduce>(),
        Collective::Alltoall => visitor.visit::<Alltoall>(),
        Collective::Barrier => visitor.visit::<Barrier>(),
        Collective::Bcast => visitor.visit::<Bcast>(),
        Collective::Gather => visitor.visit::<Gather>(),
        Collective::Reduce => visitor.visit::<Reduce>(),
        Collective::Scan => visitor.visit::<Scan>(),
        Collective::Scatter => visitor.visit::<Scatter>(),
        Collective::ReduceScatter | Collective::ReduceScatterBlock => {
            return Err(CollectiveError::NotPriced {
                family: Family::Textbook,
                collective,
            });
        }
    })
}
