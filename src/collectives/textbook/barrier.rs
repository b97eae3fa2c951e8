//! Barrier algorithms.

use crate::CommModel;
use crate::collectives::CollectiveError;
use crate::collectives::eval::setup;
use crate::collectives::{Algorithm, Problem};
use crate::util::bits::ceil_log2;

/// Barrier algorithms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub enum Barrier {
    /// Dissemination: `h` rounds of empty messages, `h T(0)`.
    Dissemination,
}
algorithm_list!(Barrier[Dissemination]);

impl Algorithm for Barrier {
    fn name(&self) -> &'static str {
        self.table_name()
    }

    fn cost(&self, model: &dyn CommModel, problem: &Problem) -> Result<f64, CollectiveError> {
        let Some((mut x, _, p)) = setup(model, problem)? else {
            return Ok(0.0);
        };
        // h rounds, every process sending in each: spaced max(T, I)
        let h = ceil_log2(p);
        Ok(f64::from(h) * x.p2p(0) + f64::from(h - 1) * x.lag(0, 0.0))
    }

    fn candidates(_: &dyn CommModel, _: &Problem) -> Vec<Self> {
        Self::ALL.to_vec()
    }
}
