//! What is sent: size and memory layout of one message.

use crate::error::MessageError;

/// One message: `count` blocks of `block_len` bytes whose starts are `stride` bytes apart (an MPI
/// vector datatype measured in bytes), with its first byte `offset` bytes into a cache line.
///
/// A contiguous message is one block (`count = 1`). A vector whose stride equals its block
/// length is contiguous as well ([`is_contiguous`](Self::is_contiguous)). This is the one input
/// every model reads: LogP-style models look only at [`bytes`](Self::bytes); strided models also
/// read [`stride`](Self::stride); the memory-lines calculator reads the whole layout.
///
/// # Examples
///
/// ```
/// use commcost::Message;
///
/// // one column of 4-byte integers of a 1000 x 1000 row-major matrix
/// let column = Message::vector(1000, 4, 4000)?;
/// assert_eq!(column.bytes(), 4000);
/// assert_eq!(column.extent(), 999 * 4000 + 4);
/// assert!(!column.is_contiguous());
/// assert!(Message::contiguous(4000).is_contiguous());
/// # Ok::<(), commcost::MessageError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "MessageFields")
)]
pub struct Message {
    count: u64,
    block_len: u64,
    stride: u64,
    offset: u64,
}

/// Private fields, no public form: loading re-runs [`Message::vector`]'s validation.
#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct MessageFields {
    count: u64,
    block_len: u64,
    stride: u64,
    #[serde(default)]
    offset: u64,
}

#[cfg(feature = "serde")]
impl TryFrom<MessageFields> for Message {
    type Error = MessageError;
    fn try_from(f: MessageFields) -> Result<Self, Self::Error> {
        Ok(Message::vector(f.count, f.block_len, f.stride)?.with_offset(f.offset))
    }
}

impl Message {
    /// A contiguous message of `bytes` bytes (one block; its stride is its length).
    ///
    /// # Examples
    ///
    /// ```
    /// let m = commcost::Message::contiguous(1024);
    /// assert_eq!((m.count(), m.block_len(), m.bytes()), (1, 1024, 1024));
    /// ```
    #[must_use]
    pub const fn contiguous(bytes: u64) -> Self {
        Self {
            count: 1,
            block_len: bytes,
            stride: bytes,
            offset: 0,
        }
    }

    /// A vector message: `count` blocks of `block_len` bytes, block starts `stride` bytes apart.
    ///
    /// With `count <= 1` the stride is irrelevant and is set to `block_len`.
    ///
    /// # Errors
    ///
    /// * [`MessageError::ZeroStride`] if `count > 1` and `stride = 0`;
    /// * [`MessageError::BlockLongerThanStride`] if `count > 1` and `block_len > stride`;
    /// * [`MessageError::Overflow`] if `count * block_len` or the extent
    ///   `(count - 1) * stride + block_len` does not fit in a `u64`.
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::{Message, MessageError};
    /// assert!(Message::vector(16, 8, 1024).is_ok());
    /// assert_eq!(
    ///     Message::vector(2, 16, 8),
    ///     Err(MessageError::BlockLongerThanStride { block_len: 16, stride: 8 })
    /// );
    /// ```
    pub fn vector(count: u64, block_len: u64, stride: u64) -> Result<Self, MessageError> {
        if count <= 1 {
            return Ok(Self {
                count,
                block_len,
                stride: block_len,
                offset: 0,
            });
        }
        if stride == 0 {
            return Err(MessageError::ZeroStride { count });
        }
        if block_len > stride {
            return Err(MessageError::BlockLongerThanStride { block_len, stride });
        }
        let overflow = MessageError::Overflow {
            count,
            block_len,
            stride,
        };
        // extent >= bytes because stride >= block_len, so checking the extent suffices.
        (count - 1)
            .checked_mul(stride)
            .and_then(|x| x.checked_add(block_len))
            .ok_or(overflow)?;
        Ok(Self {
            count,
            block_len,
            stride,
            offset: 0,
        })
    }

    /// The same message with its first byte `offset` bytes into a cache line.
    ///
    /// Only the memory-lines calculator reads the offset; it reduces it modulo the line size.
    pub const fn with_offset(mut self, offset: u64) -> Self {
        self.offset = offset;
        self
    }

    /// Total payload bytes, `count * block_len`.
    pub const fn bytes(&self) -> u64 {
        self.count * self.block_len
    }

    /// Number of blocks.
    pub const fn count(&self) -> u64 {
        self.count
    }

    /// Bytes per block.
    pub const fn block_len(&self) -> u64 {
        self.block_len
    }

    /// Bytes between the starts of consecutive blocks (`block_len` for a single block).
    pub const fn stride(&self) -> u64 {
        self.stride
    }

    /// Offset of the first byte inside its cache line, as given to [`with_offset`](Self::with_offset).
    pub const fn offset(&self) -> u64 {
        self.offset
    }

    /// Bytes from the first to the last byte inclusive: `(count - 1) * stride + block_len`
    /// (0 for an empty message).
    pub const fn extent(&self) -> u64 {
        if self.count == 0 {
            0
        } else {
            (self.count - 1) * self.stride + self.block_len
        }
    }

    /// True when the payload is one unbroken run of bytes (`count <= 1` or `stride = block_len`).
    pub const fn is_contiguous(&self) -> bool {
        self.count <= 1 || self.stride == self.block_len
    }

    /// The stride at which a strided-cost table is read for this message, or `None` when the
    /// message pays no strided cost: it is contiguous, or its stride is at most `unit_stride`
    /// (the element size the tables were measured with, e.g. 8 for doubles as in the log_n P
    /// paper).
    ///
    /// This is the one rule every strided model (log_n P, log_3 P, memory logP, copy-transfer)
    /// uses, so that converting between them cannot change which messages pay.
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::Message;
    /// assert_eq!(Message::vector(2048, 8, 1024)?.strided_access(8), Some(1024));
    /// assert_eq!(Message::contiguous(16384).strided_access(8), None);
    /// assert_eq!(Message::vector(100, 4, 8)?.strided_access(8), None);
    /// # Ok::<(), commcost::MessageError>(())
    /// ```
    pub const fn strided_access(&self, unit_stride: u64) -> Option<u64> {
        if self.is_contiguous() || self.stride <= unit_stride {
            None
        } else {
            Some(self.stride)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_layouts_are_errors() {
        assert_eq!(
            Message::vector(3, 4, 0),
            Err(MessageError::ZeroStride { count: 3 })
        );
        assert_eq!(
            Message::vector(2, 9, 8),
            Err(MessageError::BlockLongerThanStride {
                block_len: 9,
                stride: 8
            })
        );
        assert!(matches!(
            Message::vector(u64::MAX, 2, 4),
            Err(MessageError::Overflow { .. })
        ));
        // count * block_len alone overflows
        assert!(matches!(
            Message::vector(1 << 33, 1 << 31, 1 << 31),
            Err(MessageError::Overflow { .. })
        ));
    }

    #[test]
    fn degenerate_layouts_are_normalised() {
        // one block: stride irrelevant, even 0
        let one = Message::vector(1, 100, 0).unwrap();
        assert_eq!((one.stride(), one.bytes(), one.extent()), (100, 100, 100));
        assert!(one.is_contiguous());
        // empty message
        let none = Message::vector(0, 100, 7).unwrap();
        assert_eq!((none.bytes(), none.extent()), (0, 0));
        // stride == block: contiguous
        let packed = Message::vector(10, 8, 8).unwrap();
        assert!(packed.is_contiguous());
        assert_eq!(packed.extent(), 80);
        // largest representable extent is accepted
        let big = Message::vector(2, 1, u64::MAX - 1).unwrap();
        assert_eq!(big.extent(), u64::MAX);
        assert_eq!(big.with_offset(3).offset(), 3);
    }
}
