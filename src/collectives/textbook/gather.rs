//! Gather algorithms.

use crate::CommModel;
use crate::collectives::CollectiveError;
use crate::collectives::eval::{binomial_tree_of_blocks, setup};
use crate::collectives::{Algorithm, Problem};

/// Gather algorithms (`m` is each process's contribution).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub enum Gather {
    /// The root receives `P - 1` messages: `T(m) + (P - 2) max(I(m), or(m))`.
    Linear,
    /// Binomial tree, subtrees forwarding their blocks:
    /// `Σ_{k=1}^{h} T(m · min(2^(k-1), P - 2^(k-1))) + (h - 1) g(m)`.
    Binomial,
}
algorithm_list!(Gather [Linear, Binomial]);

impl Algorithm for Gather {
    fn name(&self) -> &'static str {
        self.table_name()
    }

    fn cost(&self, model: &dyn CommModel, problem: &Problem) -> Result<f64, CollectiveError> {
        let Some((mut x, m, p)) = setup(model, problem)? else {
            return Ok(0.0);
        };
        Ok(match self {
            Self::Linear => {
                let t = x.quantities(m);
                t.p2p + (p - 2) as f64 * t.send_interval.max(t.recv_overhead)
            }
            Self::Binomial => binomial_tree_of_blocks(&mut x, m, p),
        })
    }

    fn candidates(_: &dyn CommModel, _: &Problem) -> Vec<Self> {
        Self::ALL.to_vec()
    }
}
