//! The labels of one rank block: Schedgen's numbered labels `l<n>` in a vector, any other in
//! a hash map.

use std::collections::HashMap;

use super::LABEL_BYTES;
use crate::sim::op::OpId;

/// The highest `n` of a label `l<n>` kept in a block's table of numbered labels (a vector
/// indexed by `n`, Schedgen's labels): 4 bytes per entry up to the highest `n` used, counted
/// against the memory budget; other labels are hashed.
pub(super) const MAX_NUMBERED_LABEL: u32 = 1 << 22;

/// `n` of a label `l<n>` written as Schedgen writes it (`l1`, `l2`, …: no sign, no leading
/// zero), at most [`MAX_NUMBERED_LABEL`].
pub(super) fn numbered(label: &[u8]) -> Option<u32> {
    let digits = label.strip_prefix(b"l")?;
    if digits.is_empty() || digits.len() > 7 || digits[0] == b'0' {
        return None;
    }
    let mut n = 0u32;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n * 10 + u32::from(d - b'0');
    }
    (n <= MAX_NUMBERED_LABEL).then_some(n)
}

/// A small, fast hash of labels (FxHash's multiply-rotate over 8-byte words, then the
/// product's halves folded together): labels are the text's own, a collision costs only time.
///
/// The fold matters: the hash table indexes its buckets by the hash's low bits, and the low
/// bits of a product depend only on the low bits of its factors, here a label's first bytes.
/// Without it the labels `l4194305` … `l4999999` of a long rank block (all starting `l4`) fall
/// into a few dozen buckets, and reading them takes quadratic time.
#[derive(Default, Clone, Copy)]
pub(super) struct LabelHasher(u64);

impl std::hash::Hasher for LabelHasher {
    fn finish(&self) -> u64 {
        let wide = u128::from(self.0) * u128::from(FOLD);
        (wide as u64) ^ ((wide >> 64) as u64)
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word))
                .wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
}

/// The multiplier of [`LabelHasher::finish`]'s fold (2^64 divided by the golden ratio, odd).
const FOLD: u64 = 0x9e37_79b9_7f4a_7c15;

pub(super) type LabelMap<'a> = HashMap<&'a str, OpId, std::hash::BuildHasherDefault<LabelHasher>>;

/// The labels of one rank block: `l<n>` in a vector indexed by `n` ([`NONE_OP`] where not
/// defined), any other label in a hash map.
pub(super) struct Labels<'a> {
    pub(super) numbered: Vec<u32>,
    /// The highest `n` defined in this block (the part of `numbered` to clear).
    pub(super) high: usize,
    pub(super) named: LabelMap<'a>,
}

/// No operation has this label.
pub(super) const NONE_OP: u32 = u32::MAX;

impl<'a> Labels<'a> {
    pub(super) fn get(&self, label: &str) -> Option<OpId> {
        match numbered(label.as_bytes()) {
            Some(n) => self
                .numbered
                .get(n as usize)
                .filter(|&&op| op != NONE_OP)
                .map(|&op| OpId(op)),
            None => self.named.get(label).copied(),
        }
    }
    pub(super) fn get_numbered(&self, n: u32) -> Option<OpId> {
        self.numbered
            .get(n as usize)
            .filter(|&&op| op != NONE_OP)
            .map(|&op| OpId(op))
    }
    /// Bytes held (the numbered table, the map at [`LABEL_BYTES`] per entry of capacity).
    pub(super) fn bytes(&self) -> u64 {
        (self.numbered.capacity() as u64)
            .saturating_mul(4)
            .saturating_add((self.named.capacity() as u64).saturating_mul(LABEL_BYTES))
    }
    /// Empties the table for the next block (keeping its room).
    pub(super) fn clear(&mut self) {
        let high = self.high.min(self.numbered.len().saturating_sub(1));
        if !self.numbered.is_empty() {
            self.numbered[..=high].fill(NONE_OP);
        }
        self.high = 0;
        self.named.clear();
    }
}

#[cfg(test)]
mod tests {
    use std::hash::BuildHasher as _;

    use super::LabelMap;

    /// The low bits of the hashes (the bucket a hash table picks) spread over the labels of a
    /// long block past the numbered table, which share their first bytes: a random function
    /// takes about 63 % of the values, a hash of the first bytes alone a few dozen.
    #[test]
    fn labels_sharing_their_first_bytes_spread_over_the_buckets() {
        let build = LabelMap::default().hasher().clone();
        let count = 1usize << 16;
        let mut seen = vec![false; count];
        for n in 0..count {
            let label = format!("l{}", 4_194_305 + n);
            seen[(build.hash_one(label.as_str()) as usize) & (count - 1)] = true;
        }
        let distinct = seen.iter().filter(|&&s| s).count();
        assert!(distinct > count / 2, "{distinct} of {count} buckets");
    }
}
