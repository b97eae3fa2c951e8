//! Allreduce algorithms.

use crate::CommModel;
use crate::collectives::CollectiveError;
use crate::collectives::eval::{ceil_div, setup};
use crate::collectives::{Algorithm, Problem};
use crate::util::bits::floor_log2;

/// Allreduce algorithms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub enum Allreduce {
    /// Recursive doubling: `h' (T(m) + op(m)) + [np2] (2 T(m) + op(m))` — for `P` not a power of
    /// two the `P - p'` extra processes first fold into partners and get the result back.
    RecursiveDoubling,
    /// Ring: reduce-scatter then allgather of `c = ⌈m/P⌉`-byte blocks:
    /// `(P - 1) (2 T(c) + op(c))`.
    Ring,
    /// Rabenseifner: reduce-scatter by recursive halving, allgather by recursive doubling:
    /// `[np2] (T(m) + op(m)) + Σ_{k=1}^{h'} (2 T(⌈m/2^k⌉) + op(⌈m/2^k⌉)) + [np2] T(m)`; when the
    /// sender is slower than the network, at `P` a power of two the exact spacing of its `2 h'`
    /// lock-step rounds of changing size (the sender's lag or the receiver's interval of the
    /// next piece, as for [`Allgather::Bruck`](super::Allgather::Bruck), with the operator), otherwise the sum of the
    /// rounds' lags `max(0, I - T - op)`.
    Rabenseifner,
}
algorithm_list!(Allreduce [RecursiveDoubling, Ring, Rabenseifner]);

impl Algorithm for Allreduce {
    fn name(&self) -> &'static str {
        self.table_name()
    }

    fn cost(&self, model: &dyn CommModel, problem: &Problem) -> Result<f64, CollectiveError> {
        let Some((mut x, m, p)) = setup(model, problem)? else {
            return Ok(0.0);
        };
        let hp = floor_log2(p);
        let extra = if p.is_power_of_two() { 0.0 } else { 1.0 };
        Ok(match self {
            // the hp doubling sends of a remaining process are spaced max(T + op, I), and so is
            // its send back to a folded process after the last one
            Self::RecursiveDoubling => {
                let spacings = f64::from(hp) - 1.0 + extra;
                f64::from(hp) * (x.p2p(m) + x.op(m))
                    + extra * (2.0 * x.p2p(m) + x.op(m))
                    + spacings * x.lag(m, x.op(m))
            }
            // 2 (P - 1) rounds of c bytes: the reduce-scatter's spaced max(T + op, I), the
            // allgather's max(T, I)
            Self::Ring => {
                let c = ceil_div(m, p);
                (p - 1) as f64 * (2.0 * x.p2p(c) + x.op(c))
                    + (p - 1) as f64 * x.lag(c, x.op(c))
                    + (p - 2) as f64 * x.lag(c, 0.0)
            }
            Self::Rabenseifner => {
                let (time, bytes) = x.halving_sum(m, hp);
                let halving = 2.0 * time + x.problem.operator.total(hp.into(), bytes);
                // a remaining process sends in every round: after each reduce-scatter round
                // (⌈m / 2^k⌉ bytes, k = 1 … hp) and after each allgather round but the last
                // (k = hp … 2; and the last too when it then sends back to a folded process)
                if p.is_power_of_two() {
                    halving + x.rabenseifner_spacings(m, hp)
                } else {
                    let lags = x.halving_lags(m, hp, 1);
                    (x.p2p(m) + x.op(m)) + halving + x.p2p(m) + lags
                }
            }
        })
    }

    fn candidates(_: &dyn CommModel, _: &Problem) -> Vec<Self> {
        Self::ALL.to_vec()
    }
}
