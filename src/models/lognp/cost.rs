//! The cost functions of a log_n P hop: [`SizeCost`] (by size) and [`StrideCost`] (the extra
//! cost of strided data).

use crate::error::ParameterError;
use crate::table::Table1D;
use crate::table::Table2D;

/// The cost of one hop as a function of the message size `s` (bytes): the unit-stride cost
/// `o_i(s)` or the gap `g_i(s)` of a log_n P hop.
///
/// Every form evaluates to a non-negative number of seconds: a table's linear extrapolation is
/// clamped at 0. Its variants are public, so a `SizeCost` is not checked on its own:
/// [`LogNP::new`](super::LogNP::new) validates the costs of every hop (finite, non-negative, a
/// word size of at least 1), and so does loading a [`LogNP`](super::LogNP).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(tag = "form", rename_all = "snake_case", deny_unknown_fields)
)]
pub enum SizeCost {
    /// Measured seconds at discrete sizes, piecewise linear ([`Table1D`]).
    Table(Table1D),
    /// Measured seconds **per byte** at discrete sizes, times the size: `s · t(s)` (memory
    /// logP's per-byte `o`).
    PerByte(Table1D),
    /// `fixed + s · per_byte`: one rate, as a copy-transfer stage (`s / bandwidth`).
    Linear {
        /// Seconds at 0 bytes.
        fixed: f64,
        /// Seconds per byte.
        per_byte: f64,
    },
    /// LogGP's sending hop: `first_byte + (max(s, 1) - 1) · per_byte` (`o + (s - 1) G`).
    LongMessage {
        /// Seconds for a 1-byte message (`o`).
        first_byte: f64,
        /// Seconds per further byte (`G`).
        per_byte: f64,
    },
    /// LogP's network hop: `first_word + (⌈s / w⌉ - 1) · per_extra_word`, at least one word
    /// (`L + (m - 1) max(g, o)`).
    Words {
        /// Seconds for the first word.
        first_word: f64,
        /// Seconds for each further word.
        per_extra_word: f64,
        /// Bytes per word `w`.
        word_bytes: u64,
    },
}

impl SizeCost {
    /// The cost of a message of `bytes` bytes, seconds, never negative.
    #[inline]
    pub fn eval(&self, bytes: u64) -> f64 {
        let s = bytes as f64;
        match self {
            Self::Table(t) => t.eval(s).max(0.0),
            Self::PerByte(t) => s * t.eval(s).max(0.0),
            Self::Linear { fixed, per_byte } => fixed + s * per_byte,
            Self::LongMessage {
                first_byte,
                per_byte,
            } => first_byte + bytes.saturating_sub(1) as f64 * per_byte,
            Self::Words {
                first_word,
                per_extra_word,
                word_bytes,
            } => {
                // a word of 0 bytes (the variant's fields are public) is read as 1 byte
                let words = bytes.div_ceil((*word_bytes).max(1)).max(1);
                first_word + (words - 1) as f64 * per_extra_word
            }
        }
    }

    /// The cost as an affine function of the size on the sizes around `bytes` where it is one
    /// (see [`PiecewiseCost::p2p_affine`](crate::PiecewiseCost::p2p_affine)): a table's segment (while its line stays non-negative,
    /// as [`eval`](Self::eval) clamps), a single rate, LogGP's long-message line, a constant
    /// per-byte rate, LogP's word staircase (a line in whole words). `None` for a per-byte table
    /// of several points (`s · t(s)` is quadratic in a segment).
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::models::lognp::SizeCost;
    ///
    /// // LogGP's sending hop o + (s - 1) G with o = 1 µs, G = 1 ns/byte: (1 µs - G) + G s
    /// let hop = SizeCost::LongMessage { first_byte: 1e-6, per_byte: 1e-9 };
    /// let line = hop.affine_piece(5000).unwrap();
    /// assert_eq!((line.first, line.last), (1, u64::MAX));
    /// assert!((line.at(5000) - hop.eval(5000)).abs() < 1e-18);
    /// // a word staircase is a line in words: 1 µs + 0.1 µs per further started 8-byte word
    /// let words = SizeCost::Words { first_word: 1e-6, per_extra_word: 1e-7, word_bytes: 8 };
    /// let staircase = words.affine_piece(100).unwrap();
    /// assert_eq!(staircase.unit, 8);
    /// assert!((staircase.at(17) - 1.2e-6).abs() < 1e-18); // 3 words
    /// // s · t(s) over a table of several per-byte times is quadratic within a segment
    /// let per_byte = SizeCost::PerByte(commcost::table::Table1D::new(vec![1.0, 100.0], vec![2e-9, 1e-9])?);
    /// assert_eq!(per_byte.affine_piece(50), None);
    /// # Ok::<(), commcost::ParameterError>(())
    /// ```
    pub fn affine_piece(&self, bytes: u64) -> Option<crate::AffineCost> {
        match self {
            Self::Table(t) => t.non_negative_affine_piece(bytes),
            Self::Linear { fixed, per_byte } => {
                Some(crate::AffineCost::everywhere(*fixed, *per_byte))
            }
            Self::LongMessage {
                first_byte,
                per_byte,
            } => Some(crate::AffineCost::first_unit_then_line(
                bytes,
                *first_byte,
                *per_byte,
                1,
            )),
            Self::Words {
                first_word,
                per_extra_word,
                word_bytes,
            } => Some(crate::AffineCost::first_unit_then_line(
                bytes,
                *first_word,
                *per_extra_word,
                *word_bytes,
            )),
            Self::PerByte(t) if t.num_points() == 1 => {
                Some(crate::AffineCost::everywhere(0.0, t.values()[0].max(0.0)))
            }
            Self::PerByte(_) => None,
        }
    }

    /// Discrete sizes `S_i` this cost counts in the log_n P complexity (§5): the table's points;
    /// 1 for a single rate or a word staircase; 2 for LogGP's short / long ranges (the paper's
    /// `S_0 = 2`).
    pub fn sizes(&self) -> usize {
        match self {
            Self::Table(t) | Self::PerByte(t) => t.num_points(),
            Self::Linear { .. } | Self::Words { .. } => 1,
            Self::LongMessage { .. } => 2,
        }
    }

    pub(super) fn validate(&self, name: &'static str) -> Result<(), ParameterError> {
        match self {
            Self::Table(t) | Self::PerByte(t) => t.check_non_negative(name),
            Self::Linear { fixed, per_byte } => {
                ParameterError::non_negative(name, *fixed)?;
                ParameterError::non_negative(name, *per_byte).map(drop)
            }
            Self::LongMessage {
                first_byte,
                per_byte,
            } => {
                ParameterError::non_negative(name, *first_byte)?;
                ParameterError::non_negative(name, *per_byte).map(drop)
            }
            Self::Words {
                first_word,
                per_extra_word,
                word_bytes,
            } => {
                ParameterError::non_negative(name, *first_word)?;
                ParameterError::non_negative(name, *per_extra_word)?;
                ParameterError::at_least("word_bytes", *word_bytes, 1).map(drop)
            }
        }
    }
}

/// The additional cost of strided data over unit stride, `l_i(s, d)`, of a log_n P hop; read
/// only for messages that [`Message::strided_access`](crate::Message::strided_access) reports as strided.
///
/// Its variants are public, so a `StrideCost` is not checked on its own:
/// [`LogNP::new`](super::LogNP::new) validates it (no negative entry, zero at strides up to the
/// model's unit stride), and so does loading a [`LogNP`](super::LogNP).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(tag = "form", rename_all = "snake_case", deny_unknown_fields)
)]
pub enum StrideCost {
    /// Measured seconds on a size × stride grid ([`Table2D`]).
    Table(Table2D),
    /// Measured seconds **per byte** on a size × stride grid, times the size (memory logP's
    /// per-byte `l(s, d)`, copy-transfer's `1/bw(d) - 1/bw`).
    PerByte(Table2D),
}

impl StrideCost {
    /// The extra cost of `bytes` bytes at stride `stride`, seconds, never negative.
    #[inline]
    pub fn eval(&self, bytes: u64, stride: u64) -> f64 {
        let (s, d) = (bytes as f64, stride as f64);
        match self {
            Self::Table(t) => t.eval(s, d).max(0.0),
            Self::PerByte(t) => s * t.eval(s, d).max(0.0),
        }
    }

    /// The table's entries (`S_i · D_i` in the complexity count).
    pub fn entries(&self) -> usize {
        match self {
            Self::Table(t) | Self::PerByte(t) => t.num_entries(),
        }
    }

    pub(super) fn validate(
        &self,
        name: &'static str,
        unit_stride: u64,
    ) -> Result<(), ParameterError> {
        match self {
            Self::Table(t) | Self::PerByte(t) => t.check_strided_cost(name, unit_stride),
        }
    }
}
