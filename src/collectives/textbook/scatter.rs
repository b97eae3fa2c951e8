//! Scatter algorithms.

use crate::CommModel;
use crate::collectives::CollectiveError;
use crate::collectives::eval::{binomial_tree_of_blocks, setup};
use crate::collectives::{Algorithm, Problem};

/// Scatter algorithms (`m` is each destination's block).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub enum Scatter {
    /// The root sends `P - 1` messages: `T(m) + (P - 2) I(m)`.
    Linear,
    /// Binomial tree, halves of the remaining blocks per round:
    /// `Σ_{k=1}^{h} T(m · min(2^(h-k), P - 2^(h-k))) + (h - 1) g(m)`.
    Binomial,
}
algorithm_list!(Scatter [Linear, Binomial]);

impl Algorithm for Scatter {
    fn name(&self) -> &'static str {
        self.table_name()
    }

    fn cost(&self, model: &dyn CommModel, problem: &Problem) -> Result<f64, CollectiveError> {
        let Some((mut x, m, p)) = setup(model, problem)? else {
            return Ok(0.0);
        };
        Ok(match self {
            Self::Linear => x.p2p(m) + (p - 2) as f64 * x.interval(m),
            Self::Binomial => binomial_tree_of_blocks(&mut x, m, p),
        })
    }

    fn candidates(_: &dyn CommModel, _: &Problem) -> Vec<Self> {
        Self::ALL.to_vec()
    }
}
