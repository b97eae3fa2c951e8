//! `MPI_Allgather` in Open MPI (`coll_base_allgather.c`), ID 0.

use super::inner;
use super::table::ompi_algorithms;
use crate::CommModel;
use crate::collectives::CollectiveError;
use crate::collectives::eval::{Spacings, setup};
use crate::collectives::{Algorithm, Allgather as Textbook, Copies, Problem};
use crate::util::bits::ceil_log2;

/// Open MPI's allgather algorithms (`coll_tuned_allgather_algorithm`). `m` is each process's
/// block; the rules-file size is `m P`.
///
/// # Formula
///
/// | ID | variant | cost |
/// |---|---|---|
/// | 1 | `Linear` | a gather of the blocks to rank 0, then a broadcast of the `P m` bytes from it, each the algorithm Open MPI's fixed decision picks for it: [`Gather`](super::Gather) [`fixed_algorithm`](super::fixed_algorithm)`(P, m)` + [`Bcast`](super::Bcast) `fixed_algorithm(P, P m)` (both called through the communicator, `comm->c_coll`, by `ompi_coll_base_allgather_intra_basic_linear`, `coll_base_allgather.c`) |
/// | 2 | `Bruck` | `Σ_{k=0}^{h-1} T(m min(2^k, P - 2^k))` (the final local shift, a memory copy, is not priced) |
/// | 3 | `RecursiveDoubling` | `Σ_{k=0}^{h-1} T(m 2^k) + Σ_{k<h-1} max(lag(m 2^(k+1)), min_{j<=k} lag(m 2^j))`; `Bruck` when `P` is not a power of two |
/// | 4 | `Ring` | `(P-1) T(m)` |
/// | 5 | `Neighbor` | `T(m) + (P/2 - 1) T(2m) + max(lag(m), lag(2m)) + (P/2 - 2) lag(2m)`; `Ring` when `P` is odd |
/// | 6 | `TwoProc` | `T(m)`; only `P = 2` ([`CollectiveError::NotApplicable`] otherwise) |
///
/// Bruck, recursive doubling and ring as in Thakur, Rabenseifner & Gropp, IJHPCA 19(1), 2005;
/// neighbor exchange after Chen et al. as in `coll_base_allgather.c`. `lag(x) = max(0, I(x) -
/// T(x))` (0 when the sender keeps pace, [`PiecewiseCost::sender_keeps_pace`](crate::PiecewiseCost::sender_keeps_pace)): a process sending in
/// consecutive rounds sends them `max(T, I)` apart, and its receiving NIC takes the next piece
/// in for that piece's interval after the previous one, so that round `k + 1` follows round `k`
/// by `T(x_{k+1}) + max(lag(x_{k+1}), min_{j<=k} lag(x_j))` (see
/// [`Allgather::Bruck`](crate::collectives::Allgather::Bruck)).
///
/// Against a simulation of the schedule Open MPI runs ([`ToSchedule`](crate::sim::ToSchedule),
/// `tests/slow/sim_ompi_crosscheck.rs`, `docs/SIMULATOR.md`): forms 2-6 are exact, also when the
/// sender does not keep pace at some sizes only (Open MPI/openib, whose rounds of growing size
/// in 2, 3 and 5 are spaced by the larger piece's interval); form 1 is the sum of its two
/// calls (each rank starts the broadcast when its gather returns), related to the simulation
/// as they are.
///
/// # Examples
///
/// ```
/// use commcost::collectives::ompi::Allgather;
/// use commcost::collectives::{Algorithm, Problem};
/// use commcost::{LogGP, Message};
///
/// let model = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9)?;
/// let problem = Problem::new(4, Message::contiguous(1001));
/// // neighbor exchange on 4: T(1001) + T(2002) = (7 µs + 1 µs) + (7 µs + 2.001 µs)
/// let t = Allgather::Neighbor.cost(&model, &problem)?;
/// assert!((t - 17.001e-6).abs() < 1e-12);
/// assert!(Allgather::TwoProc.cost(&model, &problem).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(rename_all = "kebab-case", deny_unknown_fields)
)]
pub enum Allgather {
    /// 1, `linear`: gather to rank 0, then broadcast, each by Open MPI's fixed decision.
    Linear,
    /// 2, `bruck`.
    Bruck,
    /// 3, `recursive_doubling` (powers of two; Bruck otherwise).
    RecursiveDoubling,
    /// 4, `ring`.
    Ring,
    /// 5, `neighbor`: neighbor exchange (even `P`; ring otherwise).
    Neighbor,
    /// 6, `two_proc`: one exchange, `P = 2` only.
    TwoProc,
}

ompi_algorithms! {
    plain Allgather, Allgather;
    1 Linear => "linear", "linear";
    2 Bruck => "bruck", "bruck";
    3 RecursiveDoubling => "recursive-doubling", "recursive_doubling";
    4 Ring => "ring", "ring";
    5 Neighbor => "neighbor", "neighbor";
    6 TwoProc => "two-proc", "two_proc";
    impl OmpiAlgorithm {}
    impl Algorithm {
        fn candidates(_: &dyn CommModel, problem: &Problem) -> Vec<Self> {
            Self::ALL
                .iter()
                .copied()
                .filter(|a| *a != Self::TwoProc || problem.processes == 2)
                .collect()
        }
    }
}

impl Allgather {
    /// The messages and the operator: the closed form of the table above.
    fn messages_cost(
        &self,
        model: &dyn CommModel,
        problem: &Problem,
    ) -> Result<f64, CollectiveError> {
        if *self == Self::TwoProc && problem.processes > 2 {
            return Err(CollectiveError::NotApplicable {
                algorithm: "two-proc",
                processes: problem.processes,
                requirement: "exactly 2 processes",
            });
        }
        let Some((mut x, m, p)) = setup(model, problem)? else {
            return Ok(0.0);
        };
        Ok(match self {
            Self::Linear => {
                // MPI_Gather, then MPI_Bcast of P m bytes, as the fixed decisions pick them
                let (gather, bcast) = inner::allgather_linear(p, m);
                gather.cost(model, problem)?
                    + bcast.cost(model, &problem.with_bytes(m.saturating_mul(p)))?
            }
            Self::Bruck => Textbook::Bruck.cost(model, problem)?,
            Self::RecursiveDoubling => {
                if p.is_power_of_two() {
                    // every process sends and receives in every round ([`Spacings`])
                    let h = ceil_log2(p);
                    let mut spacings = Spacings::default();
                    x.doubling_spacings(m, h, &mut spacings);
                    x.doubling_sum(m, h) + spacings.total
                } else {
                    Textbook::Bruck.cost(model, problem)?
                }
            }
            Self::Ring => Textbook::Ring.cost(model, problem)?,
            Self::Neighbor => {
                if p % 2 == 1 {
                    Textbook::Ring.cost(model, problem)?
                } else {
                    // every process sends and receives in every step ([`Spacings`]): after
                    // the first, of m bytes, the receiver takes 2m in for I(2m) and the sender
                    // waits max(0, E(m)); later steps max(0, E(2m))
                    let two = m.saturating_mul(2);
                    let steps = p / 2 - 1;
                    let lags = if steps == 0 || x.keeps_pace() {
                        0.0
                    } else {
                        let lag_two = x.lag(two, 0.0);
                        x.lag(m, 0.0).max(lag_two) + (steps - 1) as f64 * lag_two
                    };
                    x.p2p(m) + steps as f64 * x.p2p(two) + lags
                }
            }
            Self::TwoProc => x.p2p(m),
        })
    }

    /// Local work on the critical path (copies and temporary buffers, from Open MPI 4.1.4's
    /// `coll_base` source; see [`OmpiAlgorithm::local_work`]).
    pub(crate) fn local_work_of(&self, processes: u64, bytes: u64) -> Copies {
        let (p, m) = (processes, bytes);
        // rank 1 of Bruck: its block, then (P-1)m into the calloc'ed buffer, its m, and the
        // (P-1)m rotation back (coll_base_allgather.c: 113, 170-191)
        let bruck = Copies::none()
            .with(2, m)
            .with(2, (p - 1).saturating_mul(m))
            .with_buffers(1);
        match self {
            Self::Bruck => bruck,
            Self::RecursiveDoubling if !p.is_power_of_two() => bruck,
            // own block into the receive buffer (the linear one: the gather root's)
            Self::Linear
            | Self::RecursiveDoubling
            | Self::Ring
            | Self::Neighbor
            | Self::TwoProc => Copies::none().with(1, m),
        }
    }
}
