//! The Mlines model: cost grows with messages, bytes and unique memory lines touched.

use crate::error::ParameterError;
use crate::mlines::lines_touched;
use crate::{CommModel, Message, PiecewiseCost};

/// The Mlines point-to-point model: a message costs a fixed amount, an amount per byte and an
/// amount per unique memory line its bytes touch.
///
/// # Formula
///
/// Per message (Mlines paper eq. (2)):
///
/// ```text
/// T = α + β b + γ Mlines(msg, L)
/// ```
///
/// with `b` the message's bytes and `Mlines` the exact count of distinct `L`-byte lines of its
/// layout ([`crate::mlines::lines_touched`], which honours [`Message::offset`]). A row and a
/// column of the same bytes cost the same under LogGP; under Mlines the column pays `γ` for each
/// of its (up to `L / element` times more) lines.
///
/// # References
///
/// The Mlines paper (a communication cost model with the unique memory lines touched when
/// marshalling, on the Cray T3E, IBM SP-2 and Sun Enterprise 5000): "cost grows with the
/// number of unique memory lines touched", §3 and Table 1 (model M1).
///
/// # Examples
///
/// ```
/// use commcost::{CommModel, Message, MlinesModel};
///
/// // α = 10 µs, β = 1 ns/byte, γ = 20 ns/line, 64-byte lines
/// let model = MlinesModel::new(10e-6, 1e-9, 20e-9, 64)?;
/// let row = Message::contiguous(8000);            // 125 lines
/// let column = Message::vector(2000, 4, 8000)?;   // 2000 lines
/// // 10 + 8 + 2.5 = 20.5 µs and 10 + 8 + 40 = 58 µs
/// assert!((model.p2p(&row) - 20.5e-6).abs() < 1e-15);
/// assert!((model.p2p(&column) - 58e-6).abs() < 1e-15);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "MlinesParams", into = "MlinesParams")
)]
pub struct MlinesModel {
    per_message: f64,
    per_byte: f64,
    per_line: f64,
    line_bytes: u64,
}

impl MlinesModel {
    /// Builds the model from `α` (s), `β` (s/byte), `γ` (s/line) and the line size in bytes.
    ///
    /// # Errors
    ///
    /// [`ParameterError`] naming the field for a negative or non-finite coefficient or a line
    /// size of 0.
    pub fn new(
        per_message: f64,
        per_byte: f64,
        per_line: f64,
        line_bytes: u64,
    ) -> Result<Self, ParameterError> {
        Ok(Self {
            per_message: ParameterError::non_negative("per_message", per_message)?,
            per_byte: ParameterError::non_negative("per_byte", per_byte)?,
            per_line: ParameterError::non_negative("per_line", per_line)?,
            line_bytes: ParameterError::at_least("line_bytes", line_bytes, 1)?,
        })
    }

    /// `α`: seconds per message.
    pub fn per_message(&self) -> f64 {
        self.per_message
    }

    /// `β`: seconds per byte.
    pub fn per_byte(&self) -> f64 {
        self.per_byte
    }

    /// `γ`: seconds per unique memory line.
    pub fn per_line(&self) -> f64 {
        self.per_line
    }

    /// `L`: bytes per memory line.
    pub fn line_bytes(&self) -> u64 {
        self.line_bytes
    }

    /// `Mlines(msg, L)`.
    pub fn lines(&self, msg: &Message) -> u64 {
        // line_bytes >= 1 is validated, so the calculator cannot fail
        lines_touched(msg, self.line_bytes).unwrap_or(0)
    }
}

impl CommModel for MlinesModel {
    /// `α + β b + γ Mlines`.
    fn p2p(&self, msg: &Message) -> f64 {
        self.per_message
            + self.per_byte * msg.bytes() as f64
            + self.per_line * self.lines(msg) as f64
    }

    /// `α + β b + γ Mlines`, the whole cost: the model does not split a message's cost into
    /// CPU and wire time, and every term counts work on the sender's data (the message, its
    /// bytes, its lines), so the next message cannot start before this one's bytes have left
    /// the sender. Collectives then never price `k` pieces below one message of their total
    /// size: `k α + β Σ b_i + γ Σ Mlines_i >= α + β b + γ Mlines`, as the pieces' lines cover
    /// the whole message's lines.
    ///
    /// ```
    /// use commcost::{CommModel, Message, MlinesModel};
    /// let model = MlinesModel::new(10e-6, 1e-9, 20e-9, 64)?;
    /// let msg = Message::contiguous(8000);
    /// assert_eq!(model.send_interval(&msg), model.p2p(&msg));
    /// # Ok::<(), commcost::ParameterError>(())
    /// ```
    fn send_interval(&self, msg: &Message) -> f64 {
        self.p2p(msg)
    }

    fn piecewise(&self) -> Option<&dyn PiecewiseCost> {
        Some(self)
    }
}

impl PiecewiseCost for MlinesModel {
    /// `I = T` for every message (the interval is the whole cost): the rounds of a collective
    /// are spaced `T` apart without a lag.
    fn sender_keeps_pace(&self) -> bool {
        true
    }
}

/// The Mlines model's coefficients by name, for [`MlinesModel::from_params`].
///
/// # Examples
///
/// ```
/// use commcost::MlinesModel;
/// use commcost::models::mlines::MlinesParams;
/// let params = MlinesParams { per_message: 1e-6, per_byte: 1e-10, per_line: 3e-9, line_bytes: 64 };
/// assert_eq!(MlinesModel::from_params(params)?, MlinesModel::new(1e-6, 1e-10, 3e-9, 64)?);
/// # Ok::<(), commcost::ParameterError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct MlinesParams {
    /// `α`: seconds per message.
    pub per_message: f64,
    /// `β`: seconds per byte.
    pub per_byte: f64,
    /// `γ`: seconds per unique memory line touched.
    pub per_line: f64,
    /// Cache-line size in bytes.
    pub line_bytes: u64,
}

impl MlinesModel {
    /// Builds the model from named coefficients (seconds, seconds per byte, seconds per line).
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn from_params(params: MlinesParams) -> Result<Self, ParameterError> {
        Self::new(
            params.per_message,
            params.per_byte,
            params.per_line,
            params.line_bytes,
        )
    }
}

impl From<MlinesModel> for MlinesParams {
    /// The parameters by name (the form `MlinesModel` is stored in).
    fn from(m: MlinesModel) -> Self {
        Self {
            per_message: m.per_message,
            per_byte: m.per_byte,
            per_line: m.per_line,
            line_bytes: m.line_bytes,
        }
    }
}

impl TryFrom<MlinesParams> for MlinesModel {
    type Error = ParameterError;
    /// As [`MlinesModel::from_params`].
    fn try_from(params: MlinesParams) -> Result<Self, Self::Error> {
        Self::from_params(params)
    }
}
