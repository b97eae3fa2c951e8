//! `MPI_Bcast` in Open MPI (`coll_base_bcast.c`), ID 7.

use super::table::ompi_algorithms;

use super::{Shape, bcast_tree, linear_fan_out, segment_candidates};
use crate::CommModel;
use crate::collectives::CollectiveError;
use crate::collectives::eval::{binomial_tree_of_blocks, setup};
use crate::collectives::{Copies, Problem};
use crate::util::bits::ceil_log2;

/// Open MPI's broadcast algorithms (`coll_tuned_bcast_algorithm`). `m` is the buffer, which is
/// also the rules-file size. `segment` is in bytes, 0 = unsegmented.
///
/// # Formula
///
/// With `Tree(shape, m, s)` the segmented tree broadcast of the [module docs](super):
///
/// | ID | variant | cost |
/// |---|---|---|
/// | 1 | `BasicLinear` | `T(m) + (P - 2) I(m)` |
/// | 2 | `Chain` | `Tree(chain(fanout), m, segment)` |
/// | 3 | `Pipeline` | `Tree(chain(1), m, segment)` |
/// | 4 | `SplitBinaryTree` | `Tree(binary, ⌈m/2⌉, segment) + T(⌈m/2⌉)`; `Pipeline` when `⌊m/2⌋ = 0` or `segment > ⌊m/2⌋` |
/// | 5 | `BinaryTree` | `Tree(binary, m, segment)` |
/// | 6 | `Binomial` | `Tree(binomial, m, segment)` |
/// | 7 | `Knomial` | `Tree(knomial(radix), m, segment)` |
/// | 8 | `ScatterAllgather` | binomial scatter of `c = ⌈m/P⌉` + `Σ_{k<h} T(c 2^k)` + lags; `BasicLinear` when `m < P` |
/// | 9 | `ScatterAllgatherRing` | binomial scatter of `c` + `(P - 1) T(c)` + `(P - 1) lag(c)`; `BasicLinear` when `m < P` |
///
/// The binomial scatter of `c`-byte blocks is `Σ_{k=1}^{h} T(c min(2^(h-k), P - 2^(h-k))) +
/// (h - 1) g(c)`. Algorithm 8's recursive doubling on `P` not a power of two also forwards the
/// blocks of the missing partners by recursive halving; that forwarding is not priced.
/// `lag(x) = max(0, I(x) - T(x))`: when the sender cannot keep pace
/// ([`PiecewiseCost::sender_keeps_pace`](crate::PiecewiseCost::sender_keeps_pace)) a process that sends in consecutive allgather rounds
/// sends them `max(T, I)` apart (8: `lag(c) + Σ_{k<h-1} lag(c 2^k)`).
///
/// Against a simulation of the schedule Open MPI runs ([`ToSchedule`](crate::sim::ToSchedule),
/// `tests/slow/sim_ompi_crosscheck.rs`, `docs/SIMULATOR.md`): exact for 1, 2, 6, 7 and unsegmented 3 and
/// 5, whatever `P`; 8 and 9 are `(h - 1) g(c)` above it at powers of two (the scatter's LogGP gap)
/// and upper bounds otherwise, except that 8 ignores the forwarding (the simulation is within 0.7
/// to 1.45 times the closed form); segmented 3 and 5 are up to 10 % below it on models whose
/// overheads exceed their interval (the step `max(k I, or + k os)` misses how receives and sends
/// interleave); 4 is an upper bound (the exchange of halves overlaps the tree) while the sender
/// keeps pace.
///
/// # Examples
///
/// ```
/// use commcost::collectives::ompi::{Bcast, OmpiAlgorithm};
/// use commcost::collectives::{Algorithm, Problem};
/// use commcost::{LogGP, Message};
///
/// let bcast: Bcast = "chain:segment=8192,fanout=4".parse()?;
/// assert_eq!(bcast, Bcast::Chain { segment: 8192, fanout: 4 });
/// assert_eq!((bcast.ompi_id(), bcast.faninout(), bcast.segment_size()), (2, 4, 8192));
/// assert_eq!(bcast.to_string(), "chain:segment=8192,fanout=4");
/// // unsegmented binomial on 4 processes, LogGP: 2 T(m) (the largest subtree first)
/// let model = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9)?;
/// let t = Bcast::Binomial { segment: 0 }.cost(&model, &Problem::new(4, Message::contiguous(1)))?;
/// assert!((t - 2.0 * 7e-6).abs() < 1e-15);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(rename_all = "kebab-case", deny_unknown_fields)
)]
pub enum Bcast {
    /// 1, `basic_linear`: the root sends to every process.
    BasicLinear,
    /// 2, `chain`: `fanout` pipelined chains.
    Chain {
        /// Segment size, bytes (0 = unsegmented).
        segment: u64,
        /// Number of chains (Open MPI clamps it to `1..=32`).
        fanout: u64,
    },
    /// 3, `pipeline`: one pipelined chain.
    Pipeline {
        /// Segment size, bytes.
        segment: u64,
    },
    /// 4, `split_binary_tree`: each half of the message down one subtree, then exchanged.
    SplitBinaryTree {
        /// Segment size, bytes.
        segment: u64,
    },
    /// 5, `binary_tree`: segmented binary tree.
    BinaryTree {
        /// Segment size, bytes.
        segment: u64,
    },
    /// 6, `binomial`: segmented binomial tree.
    Binomial {
        /// Segment size, bytes.
        segment: u64,
    },
    /// 7, `knomial`: segmented k-nomial tree (the radix is the MCA parameter
    /// `coll_tuned_bcast_algorithm_knomial_radix`, default 4; the rules file cannot set it).
    Knomial {
        /// Segment size, bytes.
        segment: u64,
        /// Tree radix, at least 2.
        radix: u64,
    },
    /// 8, `scatter_allgather`: binomial scatter, recursive-doubling allgather.
    ScatterAllgather,
    /// 9, `scatter_allgather_ring`: binomial scatter, ring allgather.
    ScatterAllgatherRing,
}

/// Open MPI's default chain fan-out and k-nomial radix (`coll_tuned_bcast_algorithm_chain_fanout`,
/// `coll_tuned_bcast_algorithm_knomial_radix`).
const DEFAULT_FANOUT: u64 = 4;
const DEFAULT_RADIX: u64 = 4;

ompi_algorithms! {
    Bcast, Bcast;
    ignore: ["segment"];
    1 BasicLinear => "basic-linear", "basic_linear";
    2 Chain { segment: "segment" = 0, fanout: "fanout" = DEFAULT_FANOUT } => "chain", "chain";
    3 Pipeline { segment: "segment" = 0 } => "pipeline", "pipeline";
    4 SplitBinaryTree { segment: "segment" = 0 } => "split-binary-tree", "split_binary_tree";
    5 BinaryTree { segment: "segment" = 0 } => "binary-tree", "binary_tree";
    6 Binomial { segment: "segment" = 0 } => "binomial", "binomial";
    7 Knomial { segment: "segment" = 0, radix: "radix" = DEFAULT_RADIX } => "knomial", "knomial";
    8 ScatterAllgather => "scatter-allgather", "scatter_allgather";
    9 ScatterAllgatherRing => "scatter-allgather-ring", "scatter_allgather_ring";
    impl OmpiAlgorithm {
        fn faninout(&self) -> u64 {
            match *self {
                Self::Chain { fanout, .. } => fanout,
                _ => 0,
            }
        }

        fn segment_size(&self) -> u64 {
            match *self {
                Self::Chain { segment, .. }
                | Self::Pipeline { segment }
                | Self::SplitBinaryTree { segment }
                | Self::BinaryTree { segment }
                | Self::Binomial { segment }
                | Self::Knomial { segment, .. } => segment,
                Self::BasicLinear | Self::ScatterAllgather | Self::ScatterAllgatherRing => 0,
            }
        }
    }
    impl Algorithm {
        fn candidates(_: &dyn CommModel, problem: &Problem) -> Vec<Self> {
            let m = problem.message.bytes();
            let mut out = vec![Self::BasicLinear];
            for segment in segment_candidates(m) {
                for fanout in [2, 4, 8] {
                    out.push(Self::Chain { segment, fanout });
                }
                out.extend([
                    Self::Pipeline { segment },
                    Self::SplitBinaryTree { segment },
                    Self::BinaryTree { segment },
                    Self::Binomial { segment },
                    Self::Knomial {
                        segment,
                        radix: DEFAULT_RADIX,
                    },
                ]);
            }
            out.extend([Self::ScatterAllgather, Self::ScatterAllgatherRing]);
            out
        }
    }
}

impl Bcast {
    /// The messages and the operator: the closed form of the table above.
    fn messages_cost(
        &self,
        model: &dyn CommModel,
        problem: &Problem,
    ) -> Result<f64, CollectiveError> {
        if let Self::Knomial { radix, .. } = *self
            && radix < 2
        {
            return Err(CollectiveError::InvalidParameter {
                algorithm: "knomial",
                name: "radix",
                value: radix,
                expected: "at least 2",
            });
        }
        let Some((mut x, m, p)) = setup(model, problem)? else {
            return Ok(0.0);
        };
        Ok(match *self {
            Self::BasicLinear => linear_fan_out(&mut x, m, p),
            Self::Chain { segment, fanout } => {
                bcast_tree(&mut x, m, segment, &Shape::chain(fanout, p))
            }
            Self::Pipeline { segment } => bcast_tree(&mut x, m, segment, &Shape::chain(1, p)),
            Self::SplitBinaryTree { segment } => {
                let (first_half, second_half) = (m.div_ceil(2), m / 2);
                if second_half == 0 || segment > second_half {
                    bcast_tree(&mut x, m, segment, &Shape::chain(1, p))
                } else {
                    bcast_tree(&mut x, first_half, segment, &Shape::binary(p)) + x.p2p(first_half)
                }
            }
            Self::BinaryTree { segment } => bcast_tree(&mut x, m, segment, &Shape::binary(p)),
            Self::Binomial { segment } => bcast_tree(&mut x, m, segment, &Shape::binomial(p)),
            Self::Knomial { segment, radix } => {
                bcast_tree(&mut x, m, segment, &Shape::knomial(radix, p))
            }
            Self::ScatterAllgather | Self::ScatterAllgatherRing if m < p => {
                linear_fan_out(&mut x, m, p)
            }
            Self::ScatterAllgather => {
                let c = m.div_ceil(p);
                let h = ceil_log2(p);
                // a process sends in every allgather round, right after its last scatter
                // send of c bytes: rounds spaced max(T, I) (Pieces::lag)
                binomial_tree_of_blocks(&mut x, c, p)
                    + x.doubling_sum(c, h)
                    + x.lag(c, 0.0)
                    + x.doubling_lag(c, h - 1)
            }
            Self::ScatterAllgatherRing => {
                let c = m.div_ceil(p);
                binomial_tree_of_blocks(&mut x, c, p)
                    + (p - 1) as f64 * x.p2p(c)
                    + (p - 1) as f64 * x.lag(c, 0.0)
            }
        })
    }

    /// Local work on the critical path (copies and temporary buffers, from Open MPI 4.1.4's
    /// `coll_base` source; see [`OmpiAlgorithm::local_work`]).
    pub(crate) fn local_work_of(&self, processes: u64, bytes: u64) -> Copies {
        // no bcast algorithm copies, reduces or allocates data (coll_base_bcast.c)
        let _ = (processes, bytes);
        Copies::none()
    }
}
