//! Alltoall algorithms.

use crate::CommModel;
use crate::collectives::CollectiveError;
use crate::collectives::eval::{bruck_alltoall, setup};
use crate::collectives::{Algorithm, Problem};

/// All-to-all algorithms (`m` is the block for each pair).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub enum Alltoall {
    /// Pairwise exchange: `(P - 1) T(m)`.
    PairwiseExchange,
    /// Bruck: `Σ_{k=0}^{h-1} T(m · n_k)` where `n_k` counts the indices `j < P` with bit `k`
    /// set (the blocks forwarded in round `k`), plus the spacings of the rounds when the sender
    /// is slower than the network (as for [`Allgather::Bruck`](super::Allgather::Bruck)).
    Bruck,
}
algorithm_list!(Alltoall [PairwiseExchange, Bruck]);

impl Algorithm for Alltoall {
    fn name(&self) -> &'static str {
        self.table_name()
    }

    fn cost(&self, model: &dyn CommModel, problem: &Problem) -> Result<f64, CollectiveError> {
        let Some((mut x, m, p)) = setup(model, problem)? else {
            return Ok(0.0);
        };
        Ok(match self {
            // P - 1 rounds, spaced max(T, I)
            Self::PairwiseExchange => (p - 1) as f64 * x.p2p(m) + (p - 2) as f64 * x.lag(m, 0.0),
            Self::Bruck => bruck_alltoall(&mut x, m, p),
        })
    }

    fn candidates(_: &dyn CommModel, _: &Problem) -> Vec<Self> {
        Self::ALL.to_vec()
    }
}
