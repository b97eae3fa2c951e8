//! `MPI_Alltoall` in Open MPI (`coll_base_alltoall.c`), ID 3.

use super::table::ompi_algorithms;

use super::linear_fan_in;
use crate::CommModel;
use crate::collectives::CollectiveError;
use crate::collectives::eval::{bruck_alltoall, setup};
use crate::collectives::{Copies, Problem};

/// Open MPI's all-to-all algorithms (`coll_tuned_alltoall_algorithm`). `m` is the block for each
/// pair; the rules-file size is `m P`.
///
/// # Formula
///
/// | ID | variant | cost |
/// |---|---|---|
/// | 1 | `Linear` | all sends and receives posted at once: `T(m) + (P-2) max(I(m), or(m))` |
/// | 2 | `Pairwise` | `(P-1) T(m) + (P-2) lag(m)`, `lag(m) = max(0, I(m) - T(m))` (0 when the sender keeps pace) |
/// | 3 | `ModifiedBruck` | `Σ_{k=0}^{h-1} T(m n_k)`, `n_k` = indices below `P` with bit `k` set (the local rotations are not priced), plus the spacings of the rounds when the sender is slower than the network (as [`crate::collectives::Alltoall::Bruck`]) |
/// | 4 | `LinearSync` | batches of `r` requests (`r = P - 1` when `max_requests` is 0 or at least `P`): `⌈(P-1)/r⌉ (T(m) + (r-1) max(I(m), or(m)))` |
/// | 5 | `TwoProc` | `T(m)`; only `P = 2` |
///
/// Pairwise and Bruck as in Thakur, Rabenseifner & Gropp, IJHPCA 19(1), 2005.
///
/// Against a simulation of the schedule Open MPI runs ([`ToSchedule`](crate::sim::ToSchedule),
/// `tests/slow/sim_ompi_crosscheck.rs`, `docs/SIMULATOR.md`): 2, 3 and 5 are exact; the simulation of
/// 1 is 1 to 2 times the closed form and of 4 0.65 to 1.7 times: the closed forms price the
/// receptions only, while every process also sends `P - 1` messages. Where the send overhead is
/// at least the interval (memory logP: `os = I = T`), the sends, posted first, take the CPU
/// before any reception, and each reception's NIC window is charged when the CPU takes it (as
/// in LogGOPSim): `(P - 1) os + or + (P - 2) max(I, or)`, about twice the closed form.
///
/// # Examples
///
/// ```
/// use commcost::collectives::ompi::Alltoall;
/// use commcost::collectives::{Algorithm, Problem};
/// use commcost::{LogGP, Message};
///
/// let model = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9)?;
/// // pairwise on 4 processes: 3 T(1) = 21 µs
/// let t = Alltoall::Pairwise.cost(&model, &Problem::new(4, Message::contiguous(1)))?;
/// assert!((t - 21e-6).abs() < 1e-15);
/// assert_eq!("linear-sync:max-requests=2".parse::<Alltoall>()?, Alltoall::LinearSync { max_requests: 2 });
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(rename_all = "kebab-case", deny_unknown_fields)
)]
pub enum Alltoall {
    /// 1, `linear`.
    Linear,
    /// 2, `pairwise`.
    Pairwise,
    /// 3, `modified_bruck`.
    ModifiedBruck,
    /// 4, `linear_sync`: at most `max_requests` outstanding requests (the MCA parameter
    /// `coll_tuned_alltoall_algorithm_max_requests`; not a rules-file field).
    LinearSync {
        /// Outstanding requests (0 = no limit).
        max_requests: u64,
    },
    /// 5, `two_proc`: `P = 2` only.
    TwoProc,
}

ompi_algorithms! {
    Alltoall, Alltoall;
    1 Linear => "linear", "linear";
    2 Pairwise => "pairwise", "pairwise";
    3 ModifiedBruck => "modified-bruck", "modified_bruck";
    4 LinearSync { max_requests: "max-requests" = 0 } => "linear-sync", "linear_sync";
    5 TwoProc => "two-proc", "two_proc";
    impl OmpiAlgorithm {}
    impl Algorithm {
        fn candidates(_: &dyn CommModel, problem: &Problem) -> Vec<Self> {
            let mut out = vec![Self::Linear, Self::Pairwise, Self::ModifiedBruck];
            if problem.processes == 2 {
                out.push(Self::TwoProc);
            }
            out
        }
    }
}

impl Alltoall {
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
        Ok(match *self {
            Self::Linear => linear_fan_in(&mut x, m, p),
            // P - 1 steps, spaced max(T, I)
            Self::Pairwise => (p - 1) as f64 * x.p2p(m) + (p - 2) as f64 * x.lag(m, 0.0),
            Self::ModifiedBruck => bruck_alltoall(&mut x, m, p),
            Self::LinearSync { max_requests } => {
                let r = if max_requests == 0 || max_requests >= p {
                    p - 1
                } else {
                    max_requests
                };
                let t = x.quantities(m);
                (p - 1).div_ceil(r) as f64
                    * (t.p2p + (r - 1) as f64 * t.send_interval.max(t.recv_overhead))
            }
            Self::TwoProc => x.p2p(m),
        })
    }

    /// Local work on the critical path (copies and temporary buffers, from Open MPI 4.1.4's
    /// `coll_base` source; see [`OmpiAlgorithm::local_work`]).
    pub(crate) fn local_work_of(&self, processes: u64, bytes: u64) -> Copies {
        let (p, m) = (processes, bytes);
        match self {
            // the initial and final rotations of P m, and one block copy per set bit of every
            // step index (coll_base_alltoall.c: 261-276, 309, 318-324); tmpbuf and two index
            // arrays
            Self::ModifiedBruck => {
                let bits = popcount_sum(p);
                Copies::none()
                    .with(2, p.saturating_mul(m))
                    .with(bits, m)
                    .with_buffers(3)
            }
            // the own block, to itself
            Self::Linear | Self::Pairwise | Self::LinearSync { .. } | Self::TwoProc => {
                Copies::none().with(1, m)
            }
        }
    }
}

/// `Σ_{i=0}^{n-1} popcount(i)` in closed form (bit `k` is set in `2^k` of every `2^(k+1)`
/// consecutive integers), saturating.
fn popcount_sum(n: u64) -> u64 {
    let n = u128::from(n);
    let total: u128 = (0..64u32)
        .map(|k| {
            let period = 1u128 << (k + 1);
            let half = 1u128 << k;
            (n / period) * half + (n % period).saturating_sub(half)
        })
        .sum();
    u64::try_from(total).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod local_work_tests {
    use super::popcount_sum;

    #[test]
    fn popcount_sum_matches_counting() {
        for n in 0..300u64 {
            let counted: u64 = (0..n).map(|i| u64::from(i.count_ones())).sum();
            assert_eq!(popcount_sum(n), counted, "n = {n}");
        }
        // 2^k numbers below 2^k carry k 2^(k-1) set bits
        assert_eq!(popcount_sum(1 << 40), 40 << 39);
    }
}
