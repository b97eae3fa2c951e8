//! PRAM: every communication costs one unit.

use crate::error::ParameterError;
use crate::{CommModel, Message, PiecewiseCost};

/// The PRAM model: every communication, whatever its size or layout, costs one unit.
///
/// # Formula
///
/// ```text
/// T = o + l = unit_cost
/// ```
///
/// As a log_n P special case (Cameron, Ge & Sun 2007, §5): `n = 1` and the single hop costs one unit. PRAM
/// has no overhead or gap, so the trait's defaults apply: a sender can start the next message at
/// once, which is the PRAM assumption of unlimited concurrent access.
///
/// # References
///
/// S. Fortune, J. Wyllie, "Parallelism in random access machines", STOC 1978.
///
/// # Examples
///
/// ```
/// use commcost::{CommModel, Message, Pram};
///
/// let pram = Pram::unit();
/// assert_eq!(pram.unit_cost(), 1.0);
/// assert_eq!(pram.p2p(&Message::contiguous(1 << 20)), 1.0);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "PramParams", into = "PramParams")
)]
pub struct Pram {
    unit_cost: f64,
}

impl Pram {
    /// A PRAM whose every communication costs `unit_cost` seconds.
    ///
    /// # Errors
    ///
    /// [`ParameterError::OutOfRange`] for a negative or non-finite `unit_cost`.
    pub fn new(unit_cost: f64) -> Result<Self, ParameterError> {
        Ok(Self {
            unit_cost: ParameterError::non_negative("unit_cost", unit_cost)?,
        })
    }

    /// The textbook PRAM: unit cost 1.
    pub fn unit() -> Self {
        Self { unit_cost: 1.0 }
    }

    /// Cost of any communication, seconds.
    pub fn unit_cost(&self) -> f64 {
        self.unit_cost
    }
}

impl CommModel for Pram {
    /// `T = unit_cost`.
    fn p2p(&self, _msg: &Message) -> f64 {
        self.unit_cost
    }

    fn piecewise(&self) -> Option<&dyn PiecewiseCost> {
        Some(self)
    }
}

impl PiecewiseCost for Pram {
    /// The constant `unit_cost` on every size.
    fn p2p_affine(&self, _bytes: u64) -> Option<crate::AffineCost> {
        Some(crate::AffineCost::everywhere(self.unit_cost, 0.0))
    }

    /// No overhead, so no interval between sends: always.
    fn sender_keeps_pace(&self) -> bool {
        true
    }

    /// `I - T = 0 - unit_cost` on every size: never behind.
    fn send_lag_affine(&self, _bytes: u64) -> Option<crate::AffineCost> {
        Some(crate::AffineCost::everywhere(-self.unit_cost, 0.0))
    }
}

/// PRAM's parameter by name, for [`Pram::from_params`]; with the `serde` feature the form a
/// [`Pram`] is stored in.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct PramParams {
    /// The cost of every communication, seconds.
    pub unit_cost: f64,
}

impl Pram {
    /// Builds the model from its parameters by name (the form it is stored in).
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn from_params(params: PramParams) -> Result<Self, ParameterError> {
        Self::new(params.unit_cost)
    }
}

impl TryFrom<PramParams> for Pram {
    type Error = ParameterError;
    /// As [`Pram::from_params`].
    fn try_from(params: PramParams) -> Result<Self, Self::Error> {
        Self::from_params(params)
    }
}

impl From<Pram> for PramParams {
    /// The parameters by name.
    fn from(m: Pram) -> Self {
        Self {
            unit_cost: m.unit_cost,
        }
    }
}
