//! Allgather algorithms.

use crate::CommModel;
use crate::collectives::CollectiveError;
use crate::collectives::eval::{Spacings, binomial_blocks, bruck_spacings, setup};
use crate::collectives::{Algorithm, Problem};
use crate::util::bits::floor_log2;

/// Allgather algorithms (`m` is each process's contribution).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub enum Allgather {
    /// Ring: `(P - 1) T(m)`.
    Ring,
    /// Recursive doubling: `Σ_{k=0}^{h'-1} T(c 2^k)` with `c = m ⌈P/p'⌉`, plus for `P` not a
    /// power of two a first step `T(m)` (the extra processes fold into partners) and a last
    /// step `T(P m)` (they get the result). When the sender is slower than the network, the
    /// spacings of the rounds (below).
    RecursiveDoubling,
    /// Bruck: `Σ_{k=0}^{h-1} T(m · min(2^k, P - 2^k))`, any `P`, plus the spacings of the
    /// rounds when the sender is slower than the network: with `E(x) = I(x) - T(x)`, round
    /// `k + 1` starts `max(0, min_{j<=k} E(x_j), E(x_{k+1}))` later than its data arrived —
    /// the sender's lag after its earlier rounds or the receiver's NIC taking the next, larger
    /// piece in for its own interval `I(x_{k+1})`, whichever is later (exact under LogGOPS;
    /// summing `max(0, E(x_k))` of the smaller piece fell short on Open MPI/openib).
    Bruck,
}
algorithm_list!(Allgather [Ring, RecursiveDoubling, Bruck]);

impl Algorithm for Allgather {
    fn name(&self) -> &'static str {
        self.table_name()
    }

    fn cost(&self, model: &dyn CommModel, problem: &Problem) -> Result<f64, CollectiveError> {
        let Some((mut x, m, p)) = setup(model, problem)? else {
            return Ok(0.0);
        };
        Ok(match self {
            // P - 1 rounds, spaced max(T, I)
            Self::Ring => (p - 1) as f64 * x.p2p(m) + (p - 2) as f64 * x.lag(m, 0.0),
            Self::RecursiveDoubling => {
                let hp = floor_log2(p);
                let folded = p.div_ceil(1u64 << hp);
                let c = m.saturating_mul(folded);
                let doubling = x.doubling_sum(c, hp);
                if p.is_power_of_two() {
                    // every process sends and receives in every round ([`Spacings`])
                    let mut spacings = Spacings::default();
                    x.doubling_spacings(c, hp, &mut spacings);
                    doubling + spacings.total
                } else {
                    // the last doubling send is followed by the send to the folded process
                    x.p2p(m) + doubling + x.p2p(m.saturating_mul(p)) + x.doubling_lag(c, hp)
                }
            }
            // Σ_{k=0}^{h-1} T(m min(2^k, P - 2^k)): the binomial rounds in reverse order;
            // every process sends and receives in every round ([`Spacings`])
            Self::Bruck => binomial_blocks(&mut x, m, p) + bruck_spacings(&mut x, m, p),
        })
    }

    fn candidates(_: &dyn CommModel, _: &Problem) -> Vec<Self> {
        Self::ALL.to_vec()
    }
}
