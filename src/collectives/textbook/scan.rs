//! Scan algorithms.

use crate::CommModel;
use crate::collectives::CollectiveError;
use crate::collectives::eval::setup;
use crate::collectives::{Algorithm, Problem};
use crate::util::bits::ceil_log2;

/// Scan (parallel prefix) algorithms; each step applies the operator to the received data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub enum Scan {
    /// Linear chain: `(P - 1) (T(m) + op(m))`.
    LinearChain,
    /// Recursive doubling (log-step): `h (T(m) + op(m))` — the `O(log P)` growth of the Mlines
    /// paper's ZPL scans.
    RecursiveDoubling,
}
algorithm_list!(Scan [LinearChain, RecursiveDoubling]);

impl Algorithm for Scan {
    fn name(&self) -> &'static str {
        self.table_name()
    }

    fn cost(&self, model: &dyn CommModel, problem: &Problem) -> Result<f64, CollectiveError> {
        let Some((mut x, m, p)) = setup(model, problem)? else {
            return Ok(0.0);
        };
        let step = x.p2p(m) + x.op(m);
        Ok(match self {
            Self::LinearChain => (p - 1) as f64 * step,
            // h rounds, each process sending in every one: spaced max(T + op, I)
            Self::RecursiveDoubling => {
                let h = ceil_log2(p);
                f64::from(h) * step + f64::from(h - 1) * x.lag(m, x.op(m))
            }
        })
    }

    fn candidates(_: &dyn CommModel, _: &Problem) -> Vec<Self> {
        Self::ALL.to_vec()
    }
}
