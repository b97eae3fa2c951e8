//! `MPI_Allreduce` in Open MPI (`coll_base_allreduce.c`), ID 2.

use super::table::ompi_algorithms;

use super::{inner, linear_fan_in, linear_fan_out, segment_candidates};
use crate::CommModel;
use crate::collectives::CollectiveError;
use crate::collectives::eval::setup;
use crate::collectives::{Algorithm, Allreduce as Textbook, Copies, Problem};
use crate::util::bits::floor_log2;

/// Open MPI's allreduce algorithms (`coll_tuned_allreduce_algorithm`). `m` is the vector (also
/// the rules-file size); only `SegmentedRing` uses a segment size.
///
/// # Formula
///
/// `c = ⌈m/P⌉`, `h' = ⌊log2 P⌋`, `[np2]` = 1 when `P` is not a power of two:
///
/// | ID | variant | cost |
/// |---|---|---|
/// | 1 | `BasicLinear` | linear reduce to rank 0, `T(m) + (P-2) max(I(m), or(m)) + (P-1) op(m)`, then linear broadcast `T(m) + (P-2) I(m)` |
/// | 2 | `Nonoverlapping` | reduce to rank 0, then broadcast from it, each the algorithm Open MPI's fixed decision picks for `m`: [`Reduce`](super::Reduce) [`fixed_algorithm`](super::fixed_algorithm)`(P, m)` + [`Bcast`](super::Bcast) `fixed_algorithm(P, m)` (both called through the communicator, `comm->c_coll`, by `ompi_coll_base_allreduce_intra_nonoverlapping`, `coll_base_allreduce.c`) |
/// | 3 | `RecursiveDoubling` | `h' (T(m) + op(m)) + [np2] (2 T(m) + op(m))` |
/// | 4 | `Ring` | `(P-1)(2 T(c) + op(c))`; `RecursiveDoubling` when `m < P` |
/// | 5 | `SegmentedRing` | `n = ⌊m / (P s)⌋` phases (`+1` when the rest `r = m mod P s` has `r >= P` and `r > P s / 2`), pieces `e = ⌈c/n⌉`: `(P-1)(n (T(e) + op(e)) + T(c)) + n (P-1) lag(e, op(e)) + (P-2) lag(c)`; `Ring` when `s = 0` or `m < P s` |
/// | 6 | `Rabenseifner` | `[np2](2 T(⌈m/2⌉) + op(⌈m/2⌉) + lag(⌈m/2⌉, op)) + Σ_{k=1}^{h'} (2 T(⌈m/2^k⌉) + op(⌈m/2^k⌉)) + [np2] T(m)` + lags; `BasicLinear` when `m < 2^h'` |
///
/// Forms 3 and 4 are those of Thakur, Rabenseifner & Gropp, IJHPCA 19(1), 2005 (the crate's
/// [`Allreduce`](crate::collectives::Allreduce)); Rabenseifner's as Open MPI folds the
/// `P - 2^h'` extra processes in (each pair exchanges halves, reduces its half, and the odd one
/// sends its half back); the fallbacks are Open MPI's. `lag(x, e) = max(0, I(x) - T(x) - e)`
/// (0 when the sender keeps pace, [`PiecewiseCost::sender_keeps_pace`](crate::PiecewiseCost::sender_keeps_pace)): a process sending in
/// consecutive rounds sends them `max(T + e, I)` apart — Rabenseifner's after every
/// reduce-scatter round and every allgather round but the last, as the crate's
/// [`Allreduce`](crate::collectives::Allreduce).
///
/// Against a simulation of the schedule Open MPI runs ([`ToSchedule`](crate::sim::ToSchedule),
/// `tests/slow/sim_ompi_crosscheck.rs`, `docs/SIMULATOR.md`): 3, 4 and 5 are exact at powers of two and
/// upper bounds otherwise (folded processes idle while the others run ahead); 1 and 6 are upper
/// bounds (the operator overlaps receptions; 6 within 15 % above the simulation when the sender
/// cannot keep pace); 2 is the sum of its two calls (each rank starts the broadcast when its
/// reduce returns), related to the simulation as they are (see [`Reduce`](super::Reduce)).
///
/// # Examples
///
/// ```
/// use commcost::collectives::ompi::{Allreduce, OmpiAlgorithm};
/// use commcost::collectives::{Algorithm, Problem};
/// use commcost::{LogGP, Message};
///
/// let model = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9)?;
/// // 4 bytes on 8 processes: the ring falls back to recursive doubling, as in Open MPI
/// let small = Problem::new(8, Message::contiguous(4));
/// let ring = Allreduce::Ring.cost(&model, &small)?;
/// let doubling = Allreduce::RecursiveDoubling.cost(&model, &small)?;
/// assert_eq!(ring, doubling);
/// assert_eq!(Allreduce::Rabenseifner.ompi_id(), 6);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(rename_all = "kebab-case", deny_unknown_fields)
)]
pub enum Allreduce {
    /// 1, `basic_linear`: linear reduce to rank 0, linear broadcast.
    BasicLinear,
    /// 2, `nonoverlapping`: `MPI_Reduce` then `MPI_Bcast`, each by Open MPI's fixed decision.
    Nonoverlapping,
    /// 3, `recursive_doubling`.
    RecursiveDoubling,
    /// 4, `ring`: ring reduce-scatter, ring allgather.
    Ring,
    /// 5, `segmented_ring`: the ring with its reduce-scatter cut into segments.
    SegmentedRing {
        /// Segment size, bytes (0 = the plain ring).
        segment: u64,
    },
    /// 6, `rabenseifner`: recursive-halving reduce-scatter, recursive-doubling allgather.
    Rabenseifner,
}

ompi_algorithms! {
    Allreduce, Allreduce;
    1 BasicLinear => "basic-linear", "basic_linear";
    2 Nonoverlapping => "nonoverlapping", "nonoverlapping";
    3 RecursiveDoubling => "recursive-doubling", "recursive_doubling";
    4 Ring => "ring", "ring";
    5 SegmentedRing { segment: "segment" = 0 } => "segmented-ring", "segmented_ring";
    6 Rabenseifner => "rabenseifner", "rabenseifner";
    impl OmpiAlgorithm {
        fn segment_size(&self) -> u64 {
            match *self {
                Self::SegmentedRing { segment } => segment,
                _ => 0,
            }
        }
    }
    impl Algorithm {
        fn candidates(_: &dyn CommModel, problem: &Problem) -> Vec<Self> {
            let m = problem.message.bytes();
            let mut out = vec![
                Self::BasicLinear,
                Self::Nonoverlapping,
                Self::RecursiveDoubling,
                Self::Ring,
            ];
            out.extend(
                segment_candidates(m)
                    .filter(|&s| s > 0)
                    .map(|segment| Self::SegmentedRing { segment }),
            );
            out.push(Self::Rabenseifner);
            out
        }
    }
}

impl Allreduce {
    /// The messages and the operator: the closed form of the table above.
    fn messages_cost(
        &self,
        model: &dyn CommModel,
        problem: &Problem,
    ) -> Result<f64, CollectiveError> {
        let Some((mut x, m, p)) = setup(model, problem)? else {
            return Ok(0.0);
        };
        Ok(match *self {
            Self::BasicLinear => {
                linear_fan_in(&mut x, m, p)
                    + (p - 1) as f64 * x.op(m)
                    + linear_fan_out(&mut x, m, p)
            }
            // MPI_Reduce then MPI_Bcast, as the fixed decisions pick them
            Self::Nonoverlapping => {
                let (reduce, bcast) = inner::allreduce_nonoverlapping(p, m);
                reduce.cost(model, problem)? + bcast.cost(model, problem)?
            }
            Self::RecursiveDoubling => Textbook::RecursiveDoubling.cost(model, problem)?,
            Self::Ring | Self::SegmentedRing { segment: 0 } => {
                if m < p {
                    Textbook::RecursiveDoubling.cost(model, problem)?
                } else {
                    Textbook::Ring.cost(model, problem)?
                }
            }
            Self::SegmentedRing { segment } => {
                let round = p.saturating_mul(segment);
                if m < round {
                    return Self::Ring.cost(model, problem);
                }
                let rest = m % round;
                let phases = m / round + u64::from(rest >= p && rest > round / 2);
                let c = m.div_ceil(p);
                let piece = c.div_ceil(phases);
                // every process sends in every step: the n (P - 1) reduce steps spaced
                // max(T + op, I), the allgather's max(T, I)
                let op = x.op(piece);
                (p - 1) as f64 * (phases as f64 * (x.p2p(piece) + op) + x.p2p(c))
                    + ((p - 1) * phases) as f64 * x.lag(piece, op)
                    + (p - 2) as f64 * x.lag(c, 0.0)
            }
            Self::Rabenseifner => {
                let hp = floor_log2(p);
                if m < 1u64 << hp {
                    return Self::BasicLinear.cost(model, problem);
                }
                let (time, bytes) = x.halving_sum(m, hp);
                let halving = 2.0 * time + x.op_total(hp.into(), bytes);
                let lags = halving_lags(&mut x, m, hp, !p.is_power_of_two());
                if p.is_power_of_two() {
                    halving + lags
                } else {
                    // the extra processes fold in by exchanging halves, and get the result back
                    // (the even process sends twice, max(T + op, I) apart)
                    let half = m.div_ceil(2);
                    let op = x.op(half);
                    2.0 * x.p2p(half) + op + x.lag(half, op) + halving + x.p2p(m) + lags
                }
            }
        })
    }

    /// Local work on the critical path (copies and temporary buffers, from Open MPI 4.1.4's
    /// `coll_base` source; see [`OmpiAlgorithm::local_work`]).
    pub(crate) fn local_work_of(&self, processes: u64, bytes: u64) -> Copies {
        let (p, m) = (processes, bytes);
        let largest_pow2 = if p == 0 {
            1
        } else {
            1u64 << crate::util::bits::floor_log2(p)
        };
        let doubling = Copies::none().with(2, m).with_buffers(1);
        let ring = Copies::none()
            .with(1, m)
            .with_buffers(if p == 2 { 1 } else { 2 });
        match *self {
            // the root's receive buffer (coll_base_reduce.c: 671-680)
            Self::BasicLinear => Copies::none().with_buffers(1),
            // Open MPI's binomial reduce: the root's two receive buffers
            Self::Nonoverlapping => Copies::none().with_buffers(2),
            // sbuf into tmp, and the result back for half the ranks (coll_base_allreduce.c:
            // 158-167, 260-263)
            Self::RecursiveDoubling => doubling,
            Self::Ring | Self::SegmentedRing { .. } if m < p => doubling,
            Self::Ring | Self::SegmentedRing { .. } => ring,
            Self::Rabenseifner if m < largest_pow2 => Copies::none().with_buffers(1),
            // sbuf into rbuf; the temporary vector and four index arrays (l. 1004-1112)
            Self::Rabenseifner => Copies::none().with(1, m).with_buffers(5),
        }
    }
}

/// The lags of Rabenseifner's rounds when the sender cannot keep pace (`Pieces::lag`): a
/// remaining process sends in every round, after each reduce-scatter round (`⌈m/2^k⌉` bytes,
/// `k = 1 … h'`, spaced `max(T + op, I)`) and after each allgather round but the last
/// (`k = h' … 2`; the last too when it then sends the result to a folded process).
fn halving_lags(
    x: &mut crate::collectives::eval::Pieces<'_>,
    m: u64,
    hp: u32,
    folded: bool,
) -> f64 {
    if x.keeps_pace() {
        return 0.0;
    }
    (1..=hp)
        .map(|k| {
            let piece = m.div_ceil(1u64 << k);
            let op = x.op(piece);
            x.lag(piece, op)
                + if k >= 2 || folded {
                    x.lag(piece, 0.0)
                } else {
                    0.0
                }
        })
        .sum()
}
