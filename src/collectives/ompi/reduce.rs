//! `MPI_Reduce` in Open MPI (`coll_base_reduce.c`), ID 11.

use super::table::ompi_algorithms;

use super::{Shape, linear_fan_in, reduce_tree, segment_candidates};
use crate::CommModel;
use crate::collectives::CollectiveError;
use crate::collectives::eval::setup;
use crate::collectives::{Algorithm, Copies, Problem};
use crate::util::bits::floor_log2;

/// Open MPI's reduce algorithms (`coll_tuned_reduce_algorithm`). `m` is the vector (also the
/// rules-file size). `segment` is in bytes, 0 = unsegmented.
///
/// # Formula
///
/// With `Reduce(shape, m, s)` the segmented tree reduction of the [module docs](super):
///
/// | ID | variant | cost |
/// |---|---|---|
/// | 1 | `Linear` | `T(m) + (P-2) max(I(m), or(m)) + (P-1) op(m)` |
/// | 2 | `Chain` | `Reduce(chain(fanout), m, segment)` |
/// | 3 | `Pipeline` | `Reduce(chain(1), m, segment)` |
/// | 4 | `Binary` | `Reduce(binary, m, segment)` |
/// | 5 | `Binomial` | `Reduce(in-order binomial, m, segment)`, the tree walked over its subtree sizes: `F(n) = max(max_{j<k-1} B(j) + hop + (k-1-j) wait, F(n - 2^(k-1)) + hop)`, `k = ⌈log2 n⌉`, `B(t) = max_{j<t} B(j) + hop + (t-1-j) wait` |
/// | 6 | `InOrderBinary` | `Reduce(in-order binary, m, segment)`, the tree walked over its subtree sizes: `F(n) = max(F(n - 1 - R) + hop + [R > 0] wait, F(R) + hop)`, `R = ⌊n/2⌋` for `n >= 3` (else 0), plus `T(m)`: the tree's root is `P - 1`, which sends the result to the root 0 |
/// | 7 | `Rabenseifner` | `[np2](2 T(⌈m/2⌉) + op(⌈m/2⌉) + lag(⌈m/2⌉, op)) + Σ_{k=1}^{h'} (2 T(⌈m/2^k⌉) + op(⌈m/2^k⌉) + lag(⌈m/2^k⌉, op))`; `Linear` when `m < 2^h'` |
///
/// Rabenseifner's reduce is a recursive-halving reduce-scatter and a binomial gather of the
/// halves (Thakur, Rabenseifner & Gropp, IJHPCA 19(1), 2005); `lag(x, e) = max(0, I(x) - T(x)
/// - e)` spaces a slow sender's consecutive rounds `max(T + e, I)` apart.
///
/// A reduction absorbs a parent's children in Open MPI's list order, so a child's data waits
/// for its *later* siblings: the trees' paths are those of the module docs with the waits
/// counted after (chain: the first, long chain waits for the `f - 1` others; binomial: Open
/// MPI's *in-order* binomial tree, `ompi_coll_base_topo_build_in_order_bmtree`, whose
/// subtrees hold consecutive ranks and whose children come smallest subtree first — not the
/// broadcast's tree, whose children come largest first).
///
/// Against a simulation of the schedule Open MPI runs ([`ToSchedule`](crate::sim::ToSchedule),
/// `tests/slow/sim_ompi_crosscheck.rs`, `docs/SIMULATOR.md`): 1 and 7 are upper bounds (7 up to 25 %
/// below the simulation when the sender cannot keep pace); the unsegmented in-order binary tree
/// is exact; the unsegmented chain, binary and binomial trees are upper bounds (down to 0.63 of
/// the closed form: a later sibling whose data arrived first costs only its operator, not
/// `max(I, or + op)`); the segmented trees are within a factor: binomial 0.8 to 1.1, in-order
/// binary 0.85 to 1.15, chain 0.75 to 1.07, binary 0.6 to 1.15. Rank them
/// with [`rank_simulated`](crate::sim::rank_simulated).
///
/// # Examples
///
/// ```
/// use commcost::collectives::ompi::Reduce;
/// use commcost::collectives::{Algorithm, Problem};
/// use commcost::{LogGP, Message};
///
/// let model = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9)?;
/// // 2 processes: every tree is one message T(m) = 2o + L = 7 µs
/// let t = Reduce::Binary { segment: 0 }.cost(&model, &Problem::new(2, Message::contiguous(1)))?;
/// assert!((t - 7e-6).abs() < 1e-15);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(rename_all = "kebab-case", deny_unknown_fields)
)]
pub enum Reduce {
    /// 1, `linear`: the root receives from every process.
    Linear,
    /// 2, `chain`.
    Chain {
        /// Segment size, bytes.
        segment: u64,
        /// Number of chains (Open MPI clamps it to `1..=32`).
        fanout: u64,
    },
    /// 3, `pipeline`.
    Pipeline {
        /// Segment size, bytes.
        segment: u64,
    },
    /// 4, `binary`.
    Binary {
        /// Segment size, bytes.
        segment: u64,
    },
    /// 5, `binomial`: the in-order binomial tree (children `v + 2^j` below `v`'s lowest set
    /// bit, smallest subtree first).
    Binomial {
        /// Segment size, bytes.
        segment: u64,
    },
    /// 6, `in-order_binary` (for non-commutative operators).
    InOrderBinary {
        /// Segment size, bytes.
        segment: u64,
    },
    /// 7, `rabenseifner`: reduce-scatter by recursive halving, binomial gather.
    Rabenseifner,
}

const DEFAULT_FANOUT: u64 = 4;

ompi_algorithms! {
    Reduce, Reduce;
    ignore: ["segment"];
    1 Linear => "linear", "linear";
    2 Chain { segment: "segment" = 0, fanout: "fanout" = DEFAULT_FANOUT } => "chain", "chain";
    3 Pipeline { segment: "segment" = 0 } => "pipeline", "pipeline";
    4 Binary { segment: "segment" = 0 } => "binary", "binary";
    5 Binomial { segment: "segment" = 0 } => "binomial", "binomial";
    6 InOrderBinary { segment: "segment" = 0 } => "in-order-binary", "in-order_binary";
    7 Rabenseifner => "rabenseifner", "rabenseifner";
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
                | Self::Binary { segment }
                | Self::Binomial { segment }
                | Self::InOrderBinary { segment } => segment,
                Self::Linear | Self::Rabenseifner => 0,
            }
        }
    }
    impl Algorithm {
        fn candidates(_: &dyn CommModel, problem: &Problem) -> Vec<Self> {
            let m = problem.message.bytes();
            let mut out = vec![Self::Linear];
            for segment in segment_candidates(m) {
                for fanout in [2, 4, 8] {
                    out.push(Self::Chain { segment, fanout });
                }
                out.extend([
                    Self::Pipeline { segment },
                    Self::Binary { segment },
                    Self::Binomial { segment },
                    Self::InOrderBinary { segment },
                ]);
            }
            out.push(Self::Rabenseifner);
            out
        }
    }
}

impl Reduce {
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
            Self::Linear => linear_fan_in(&mut x, m, p) + (p - 1) as f64 * x.op(m),
            Self::Chain { segment, fanout } => {
                reduce_tree(&mut x, m, segment, &Shape::chain_fan_in(fanout, p))
            }
            Self::Pipeline { segment } => {
                reduce_tree(&mut x, m, segment, &Shape::chain_fan_in(1, p))
            }
            Self::Binary { segment } => reduce_tree(&mut x, m, segment, &Shape::binary_fan_in(p)),
            Self::Binomial { segment } => {
                reduce_tree(&mut x, m, segment, &Shape::in_order_binomial_fan_in(p))
            }
            // the tree is rooted at P - 1, which then sends the result to the root, 0
            Self::InOrderBinary { segment } => {
                reduce_tree(&mut x, m, segment, &Shape::in_order_fan_in(p))
                    + if p > 1 { x.p2p(m) } else { 0.0 }
            }
            Self::Rabenseifner => {
                let hp = floor_log2(p);
                if m < 1u64 << hp {
                    return Self::Linear.cost(model, problem);
                }
                let (time, bytes) = x.halving_sum(m, hp);
                let halving = 2.0 * time + x.op_total(hp.into(), bytes);
                // a process sends in every reduce-scatter round and then in the gather: spaced
                // max(T + op, I)
                let lags: f64 = if x.keeps_pace() {
                    0.0
                } else {
                    (1..=hp)
                        .map(|k| {
                            let piece = m.div_ceil(1u64 << k);
                            let op = x.op(piece);
                            x.lag(piece, op)
                        })
                        .sum()
                };
                if p.is_power_of_two() {
                    halving + lags
                } else {
                    // each extra process exchanges halves with a partner, reduces its half and
                    // sends it back (coll_base_reduce.c, step 1)
                    // (the even process sends twice, max(T + op, I) apart)
                    let half = m.div_ceil(2);
                    let op = x.op(half);
                    2.0 * x.p2p(half) + op + x.lag(half, op) + halving + lags
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
        // the root of the generic tree reduction receives into one or two segment buffers
        // (coll_base_reduce.c: 123-137)
        let tree = |children_above_one: bool| {
            Copies::none().with_buffers(if children_above_one { 2 } else { 1 })
        };
        match *self {
            Self::Linear => Copies::none().with_buffers(1),
            Self::Chain { fanout, .. } => tree(fanout.min(p.saturating_sub(1)) > 1),
            Self::Pipeline { segment } => tree(segment > 0 && segment < m),
            Self::Binary { .. } | Self::Binomial { .. } => tree(p > 2),
            // rank P - 1 is the tree's root: a temporary result and two receive buffers
            Self::InOrderBinary { .. } => Copies::none().with_buffers(3),
            Self::Rabenseifner if m < largest_pow2 => Copies::none().with_buffers(1),
            Self::Rabenseifner => Copies::none().with(1, m).with_buffers(5),
        }
    }
}
