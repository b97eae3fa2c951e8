//! `MPI_Scatter` in Open MPI (`coll_base_scatter.c`), ID 15.

use super::linear_fan_out;
use super::table::ompi_algorithms;
use crate::CommModel;
use crate::collectives::CollectiveError;
use crate::collectives::eval::setup;
use crate::collectives::{Algorithm, Copies, Problem, Scatter as Textbook};

/// Open MPI's scatter algorithms (`coll_tuned_scatter_algorithm`). `m` is each destination's
/// block; the rules-file size is `m P`.
///
/// # Formula
///
/// | ID | variant | cost |
/// |---|---|---|
/// | 1 | `BasicLinear` | `T(m) + (P-2) I(m)` |
/// | 2 | `Binomial` | `Σ_{k=1}^{h} T(m min(2^(h-k), P - 2^(h-k))) + (h-1) g(m)` |
/// | 3 | `LinearNb` | non-blocking linear sends, priced as `BasicLinear` |
///
/// Against a simulation of the schedule Open MPI runs ([`ToSchedule`](crate::sim::ToSchedule),
/// `tests/slow/sim_ompi_crosscheck.rs`, `docs/SIMULATOR.md`): 1 and 3 are exact; 2 is `(h - 1) g(m)`
/// above it at powers of two and an upper bound otherwise.
///
/// # Examples
///
/// ```
/// use commcost::collectives::ompi::Scatter;
/// use commcost::collectives::{Algorithm, Problem};
/// use commcost::{LogGP, Message};
///
/// let model = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9)?;
/// // binomial on 4 processes, 1-byte blocks: T(2) + T(1) + g = 7.001 + 7 + 2 µs
/// let t = Scatter::Binomial.cost(&model, &Problem::new(4, Message::contiguous(1)))?;
/// assert!((t - 16.001e-6).abs() < 1e-12);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(rename_all = "kebab-case", deny_unknown_fields)
)]
pub enum Scatter {
    /// 1, `basic_linear`.
    BasicLinear,
    /// 2, `binomial`.
    Binomial,
    /// 3, `linear_nb`.
    LinearNb,
}

ompi_algorithms! {
    plain Scatter, Scatter;
    1 BasicLinear => "basic-linear", "basic_linear";
    2 Binomial => "binomial", "binomial";
    3 LinearNb => "linear-nb", "linear_nb";
    impl OmpiAlgorithm {}
    impl Algorithm {
        fn candidates(_: &dyn CommModel, _: &Problem) -> Vec<Self> {
            vec![Self::BasicLinear, Self::Binomial]
        }
    }
}

impl Scatter {
    /// The messages and the operator: the closed form of the table above.
    fn messages_cost(
        &self,
        model: &dyn CommModel,
        problem: &Problem,
    ) -> Result<f64, CollectiveError> {
        let Some((mut x, m, p)) = setup(model, problem)? else {
            return Ok(0.0);
        };
        Ok(match self {
            Self::BasicLinear | Self::LinearNb => linear_fan_out(&mut x, m, p),
            Self::Binomial => Textbook::Binomial.cost(model, problem)?,
        })
    }

    /// Local work on the critical path (copies and temporary buffers, from Open MPI 4.1.4's
    /// `coll_base` source; see [`OmpiAlgorithm::local_work`]).
    pub(crate) fn local_work_of(&self, processes: u64, bytes: u64) -> Copies {
        let (p, m) = (processes, bytes);
        match self {
            // every process on the way to the last leaf copies its own block before it forwards,
            // each inner one into a buffer of its subtree (coll_base_scatter.c: 143-166)
            Self::Binomial => {
                let levels = u64::from(crate::util::bits::ceil_log2(p.max(1)));
                Copies::none()
                    .with(levels.max(1), m)
                    .with_buffers(levels.saturating_sub(1))
            }
            Self::BasicLinear | Self::LinearNb => Copies::none().with(1, m),
        }
    }
}
