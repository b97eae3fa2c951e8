//! Reduce algorithms.

use crate::CommModel;
use crate::collectives::CollectiveError;
use crate::collectives::eval::setup;
use crate::collectives::{Algorithm, Problem};
use crate::util::bits::ceil_log2;

/// Reduce algorithms (to one root).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub enum Reduce {
    /// Binomial tree: `h (T(m) + op(m)) + (h - 1) g(m)`.
    Binomial,
}
algorithm_list!(Reduce[Binomial]);

impl Algorithm for Reduce {
    fn name(&self) -> &'static str {
        self.table_name()
    }

    fn cost(&self, model: &dyn CommModel, problem: &Problem) -> Result<f64, CollectiveError> {
        let Some((mut x, m, p)) = setup(model, problem)? else {
            return Ok(0.0);
        };
        let h = f64::from(ceil_log2(p));
        Ok(h * (x.p2p(m) + x.op(m)) + (h - 1.0) * x.gap(m))
    }

    fn candidates(_: &dyn CommModel, _: &Problem) -> Vec<Self> {
        Self::ALL.to_vec()
    }
}
