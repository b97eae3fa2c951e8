//! `MPI_Gather` in Open MPI (`coll_base_gather.c`), ID 9.

use super::table::ompi_algorithms;

use super::{linear_fan_in, segment_candidates};
use crate::CommModel;
use crate::collectives::CollectiveError;
use crate::collectives::eval::setup;
use crate::collectives::{Algorithm, Copies, Gather as Textbook, Problem};

/// Open MPI's gather algorithms (`coll_tuned_gather_algorithm`). `m` is each process's block;
/// the rules-file size is `m P`.
///
/// # Formula
///
/// | ID | variant | cost |
/// |---|---|---|
/// | 1 | `BasicLinear` | `T(m) + (P-2) max(I(m), or(m))` |
/// | 2 | `Binomial` | `Σ_{k=1}^{h} T(m min(2^(k-1), P - 2^(k-1))) + (h-1) g(m)` |
/// | 3 | `LinearSync` | per process a zero-byte go-ahead and the first `f = min(segment, m)` bytes (`f = m` for segment 0), the rests overlapped with the chain but taken by the root's NIC one after the other: `max((P-1)(T(0) + T(f)) + T(m - f), T(0) + max(os(f), I(f)) + T(m - f) + (P-2) I(m - f))` (the second term only when `m > f`) |
///
/// Against a simulation of the schedule Open MPI runs ([`ToSchedule`](crate::sim::ToSchedule),
/// `tests/slow/sim_ompi_crosscheck.rs`, `docs/SIMULATOR.md`): 1 is exact; 2 is `(h - 1) g(m)` above it
/// at powers of two (the LogGP gap between tree rounds) and an upper bound otherwise; 3 is
/// within the factors `docs/SIMULATOR.md` lists. Its second term is a lower bound of the
/// simulation: the first rest leaves after process 1's go-ahead and first segment, and every
/// later rest holds the root's receiving NIC for its interval `I(m - f)`. Without it the form
/// was up to 6.7 times below the simulation (33 processes, LogP, 33 KiB blocks).
///
/// # Examples
///
/// ```
/// use commcost::collectives::ompi::Gather;
/// use commcost::collectives::{Algorithm, Problem};
/// use commcost::{LogGP, Message};
///
/// let model = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9)?;
/// // basic linear on 3 processes, 1 byte: T + max(I, or) = 7 µs + 2 µs
/// let t = Gather::BasicLinear.cost(&model, &Problem::new(3, Message::contiguous(1)))?;
/// assert!((t - 9e-6).abs() < 1e-15);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(rename_all = "kebab-case", deny_unknown_fields)
)]
pub enum Gather {
    /// 1, `basic_linear`.
    BasicLinear,
    /// 2, `binomial`.
    Binomial,
    /// 3, `linear_sync`: the root releases one process at a time.
    LinearSync {
        /// First-segment size, bytes (0 = the whole block).
        segment: u64,
    },
}

ompi_algorithms! {
    Gather, Gather;
    1 BasicLinear => "basic-linear", "basic_linear";
    2 Binomial => "binomial", "binomial";
    3 LinearSync { segment: "segment" = 0 } => "linear-sync", "linear_sync";
    impl OmpiAlgorithm {
        fn segment_size(&self) -> u64 {
            match *self {
                Self::LinearSync { segment } => segment,
                _ => 0,
            }
        }
    }
    impl Algorithm {
        fn candidates(_: &dyn CommModel, problem: &Problem) -> Vec<Self> {
            let mut out = vec![Self::BasicLinear, Self::Binomial];
            out.extend(
                segment_candidates(problem.message.bytes()).map(|segment| Self::LinearSync { segment }),
            );
            out
        }
    }
}

impl Gather {
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
            Self::BasicLinear => linear_fan_in(&mut x, m, p),
            Self::Binomial => Textbook::Binomial.cost(model, problem)?,
            Self::LinearSync { segment } => {
                let first = if segment == 0 { m } else { segment.min(m) };
                let go_ahead = x.p2p(0);
                let chain = (p - 1) as f64 * (go_ahead + x.p2p(first));
                if m > first {
                    let (f, r) = (x.quantities(first), x.quantities(m - first));
                    // the root's NIC takes the rests one after the other
                    let streamed = go_ahead
                        + f.send_overhead.max(f.send_interval)
                        + r.p2p
                        + (p - 2) as f64 * r.send_interval;
                    (chain + r.p2p).max(streamed)
                } else {
                    chain
                }
            }
        })
    }

    /// Local work on the critical path (copies and temporary buffers, from Open MPI 4.1.4's
    /// `coll_base` source; see [`OmpiAlgorithm::local_work`]).
    pub(crate) fn local_work_of(&self, processes: u64, bytes: u64) -> Copies {
        let (p, m) = (processes, bytes);
        match self {
            // the root's own block; before it, a child's block into the P m buffer every inner
            // process allocates (coll_base_gather.c: 73-80, 108-116)
            Self::Binomial if p > 2 => Copies::none().with(2, m).with_buffers(1),
            Self::Binomial | Self::BasicLinear | Self::LinearSync { .. } => {
                Copies::none().with(1, m)
            }
        }
    }
}
