//! `MPI_Reduce_scatter` in Open MPI (`coll_base_reduce_scatter.c`), ID 12.

use super::table::ompi_algorithms;
use super::{inner, linear_fan_out};
use crate::CommModel;
use crate::collectives::CollectiveError;
use crate::collectives::eval::{Spacings, setup};
use crate::collectives::{Algorithm, Copies, Problem};
use crate::util::bits::floor_log2;

/// Open MPI's reduce-scatter algorithms (`coll_tuned_reduce_scatter_algorithm`). `m` is the
/// whole reduced vector (`type size × Σ recvcounts`, also the rules-file size); each process
/// keeps `c = ⌈m/P⌉` bytes.
///
/// # Formula
///
/// | ID | variant | cost |
/// |---|---|---|
/// | 1 | `NonOverlapping` | reduce of the whole vector to rank 0, the algorithm Open MPI's fixed decision picks for `m` ([`Reduce`](super::Reduce) [`fixed_algorithm`](super::fixed_algorithm)`(P, m)`, called through the communicator, `comm->c_coll`, by `ompi_coll_base_reduce_scatter_intra_nonoverlapping`, `coll_base_reduce_scatter.c`), then the basic component's linear scatterv (`mca_coll_basic_scatterv_intra`: blocking sends), `T(c) + (P-2) I(c)` |
/// | 2 | `RecursiveHalving` | `[np2](T(m) + op(m)) + Σ_{k=1}^{h'} (T(⌈m/2^k⌉) + op(⌈m/2^k⌉)) + [np2] T(c) + Σ_{k=1}^{h'-1+[np2]} lag(⌈m/2^k⌉, op)`; at `P` a power of two the lags are the exact spacings of the lock-step rounds (the sender's wait or the receiver's interval of the next, smaller piece, whichever is later; see [`Allgather::Bruck`](crate::collectives::Allgather::Bruck)) |
/// | 3 | `Ring` | `(P-1)(T(c) + op(c)) + (P-2) lag(c, op(c))` |
/// | 4 | `Butterfly` | as `RecursiveHalving` (same rounds and pieces) |
///
/// Recursive halving as in Thakur, Rabenseifner & Gropp, IJHPCA 19(1), 2005. `lag(x, e) =
/// max(0, I(x) - T(x) - e)` (0 when the sender keeps pace, [`PiecewiseCost::sender_keeps_pace`](crate::PiecewiseCost::sender_keeps_pace)):
/// a process sending in consecutive rounds sends them `max(T + e, I)` apart.
///
/// Against a simulation of the schedule Open MPI runs ([`ToSchedule`](crate::sim::ToSchedule),
/// `tests/slow/sim_ompi_crosscheck.rs`, `docs/SIMULATOR.md`): 3 is exact; 2 and 4 are exact at powers of
/// two and upper bounds otherwise; 1 is the sum of its two calls (each rank starts the scatterv
/// when its reduce returns), related to the simulation as the reduce is (see
/// [`Reduce`](super::Reduce)).
///
/// # Examples
///
/// ```
/// use commcost::collectives::ompi::ReduceScatter;
/// use commcost::collectives::{Algorithm, Problem};
/// use commcost::{LogGP, Message};
///
/// let model = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9)?;
/// // ring on 4 processes, 4004 bytes: 3 T(1001) = 3 (7 µs + 1 µs)
/// let t = ReduceScatter::Ring.cost(&model, &Problem::new(4, Message::contiguous(4004)))?;
/// assert!((t - 24e-6).abs() < 1e-12);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(rename_all = "kebab-case", deny_unknown_fields)
)]
pub enum ReduceScatter {
    /// 1, `non-overlapping`: reduce by Open MPI's fixed decision, then a linear scatterv.
    NonOverlapping,
    /// 2, `recursive_halving`.
    RecursiveHalving,
    /// 3, `ring`.
    Ring,
    /// 4, `butterfly`.
    Butterfly,
}

ompi_algorithms! {
    plain ReduceScatter, ReduceScatter;
    1 NonOverlapping => "non-overlapping", "non-overlapping";
    2 RecursiveHalving => "recursive-halving", "recursive_halving";
    3 Ring => "ring", "ring";
    4 Butterfly => "butterfly", "butterfly";
    impl OmpiAlgorithm {}
    impl Algorithm {
        fn candidates(_: &dyn CommModel, _: &Problem) -> Vec<Self> {
            Self::ALL.to_vec()
        }
    }
}

impl ReduceScatter {
    /// The messages and the operator: the closed form of the table above.
    fn messages_cost(
        &self,
        model: &dyn CommModel,
        problem: &Problem,
    ) -> Result<f64, CollectiveError> {
        let Some((mut x, m, p)) = setup(model, problem)? else {
            return Ok(0.0);
        };
        let c = m.div_ceil(p);
        Ok(match self {
            Self::NonOverlapping => {
                // MPI_Reduce as the fixed decision picks it, then the root's P - 1 blocking
                // sends
                let reduce = inner::reduce_scatter_nonoverlapping(p, m);
                reduce.cost(model, problem)? + linear_fan_out(&mut x, c, p)
            }
            Self::RecursiveHalving | Self::Butterfly => {
                let hp = floor_log2(p);
                let (time, bytes) = x.halving_sum(m, hp);
                let halving = time + x.op_total(hp.into(), bytes);
                // a process sends in every round: after each but the last, spaced
                // max(T + op, I); after the last too when it then sends a folded process its
                // block
                let np2 = !p.is_power_of_two();
                let lags: f64 = if x.keeps_pace() {
                    0.0
                } else if !np2 {
                    // every process sends and receives in every round ([`Spacings`]): the
                    // receiver's NIC takes a smaller piece in for its own interval, which may
                    // exceed the sender's lag after the larger one
                    let mut spacings = Spacings::default();
                    for k in 1..=hp {
                        let piece = m.div_ceil(1u64 << k);
                        let op = x.op(piece);
                        x.spaced_round(piece, op, &mut spacings);
                    }
                    spacings.total
                } else {
                    (1..hp + u32::from(np2))
                        .map(|k| {
                            let piece = m.div_ceil(1u64 << k);
                            let op = x.op(piece);
                            x.lag(piece, op)
                        })
                        .sum()
                };
                if np2 {
                    x.p2p(m) + x.op(m) + halving + x.p2p(c) + lags
                } else {
                    halving + lags
                }
            }
            // P - 1 steps, spaced max(T + op, I)
            Self::Ring => {
                let op = x.op(c);
                (p - 1) as f64 * (x.p2p(c) + op) + (p - 2) as f64 * x.lag(c, op)
            }
        })
    }

    /// Local work on the critical path (copies and temporary buffers, from Open MPI 4.1.4's
    /// `coll_base` source; see [`OmpiAlgorithm::local_work`]).
    pub(crate) fn local_work_of(&self, processes: u64, bytes: u64) -> Copies {
        let (p, m) = (processes, bytes);
        let block = m / p.max(1);
        match self {
            // reduce to the root (its vector buffer), then its own block of the scatterv
            Self::NonOverlapping => Copies::none().with(1, block).with_buffers(2),
            // sbuf into the result vector, its block out at the end; two vectors (and index
            // arrays) (coll_base_reduce_scatter.c: 178-190, 348-351, 722-733)
            Self::RecursiveHalving | Self::Butterfly => {
                Copies::none().with(1, m).with(1, block).with_buffers(3)
            }
            // sbuf into the accumulation vector, the result block out; three buffers and the
            // counts (l. 479-530, 604)
            Self::Ring => Copies::none().with(1, m).with(1, block).with_buffers(4),
        }
    }
}
