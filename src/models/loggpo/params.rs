//! [`LogGpoParams`]: LogGPO's parameters by name, the form a [`LogGpo`] is stored in.

use super::{LogGpo, Mechanism, Progress};
use crate::error::ParameterError;
use crate::table::Table1D;

/// LogGPO's nine parameters by name, for [`LogGpo::from_params`].
///
/// # Examples
///
/// ```
/// use commcost::LogGpo;
/// use commcost::models::loggpo::LogGpoParams;
/// use commcost::models::loggpo::Mechanism;
/// use commcost::models::loggpo::Progress;
/// use commcost::table::Table1D;
/// let params = LogGpoParams {
///     latency: 5e-6,
///     gap_per_byte: 1e-9,
///     eager_limit: 12288,
///     progress: Progress::Independent,
///     eager_mechanism: Mechanism::T,
///     rendezvous_mechanism: Mechanism::Rta,
///     control_overhead: 1e-6,
///     init_overhead: Table1D::new(vec![1.0], vec![2e-6])?,
///     copy_overhead: Table1D::new(vec![1.0], vec![0.0])?,
/// };
/// let model = LogGpo::from_params(params)?;
/// assert_eq!(model.eager_limit(), 12288);
/// # Ok::<(), commcost::ParameterError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct LogGpoParams {
    /// `L`, seconds.
    pub latency: f64,
    /// `G`, seconds per byte.
    pub gap_per_byte: f64,
    /// `S`: the largest eager message, bytes.
    pub eager_limit: u64,
    /// Progress strategy.
    pub progress: Progress,
    /// Mechanism of the eager protocol.
    pub eager_mechanism: Mechanism,
    /// Mechanism of the rendezvous protocol.
    pub rendezvous_mechanism: Mechanism,
    /// `O'`: control-message overhead, seconds.
    pub control_overhead: f64,
    /// `Oi(K)`: initialisation overhead by message size, seconds.
    pub init_overhead: Table1D,
    /// `Oc(K)`: copy overhead by message size, seconds.
    pub copy_overhead: Table1D,
}

impl LogGpo {
    /// [`new`](Self::new) with named parameters.
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn from_params(params: LogGpoParams) -> Result<Self, ParameterError> {
        Self::new(
            params.latency,
            params.gap_per_byte,
            params.eager_limit,
            params.progress,
            params.eager_mechanism,
            params.rendezvous_mechanism,
            params.control_overhead,
            params.init_overhead,
            params.copy_overhead,
        )
    }
}

impl From<LogGpo> for LogGpoParams {
    /// The parameters by name (the form `LogGpo` is stored in).
    fn from(m: LogGpo) -> Self {
        Self {
            latency: m.latency,
            gap_per_byte: m.gap_per_byte,
            eager_limit: m.eager_limit,
            progress: m.progress,
            eager_mechanism: m.eager_mechanism,
            rendezvous_mechanism: m.rendezvous_mechanism,
            control_overhead: m.control_overhead,
            init_overhead: m.init_overhead,
            copy_overhead: m.copy_overhead,
        }
    }
}

impl TryFrom<LogGpoParams> for LogGpo {
    type Error = ParameterError;
    /// As [`LogGpo::from_params`].
    fn try_from(params: LogGpoParams) -> Result<Self, Self::Error> {
        Self::from_params(params)
    }
}
