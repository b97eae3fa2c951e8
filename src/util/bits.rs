//! Integer helpers of the recursive collective algorithms: binary logarithms, the lowest set
//! bit, and how many indices below `P` have a given bit set.

/// `⌈log2 P⌉` (0 for `P <= 1`).
pub(crate) fn ceil_log2(p: u64) -> u32 {
    if p <= 1 { 0 } else { (p - 1).ilog2() + 1 }
}

/// `⌊log2 P⌋` (0 for `P <= 1`).
pub(crate) fn floor_log2(p: u64) -> u32 {
    p.max(1).ilog2()
}

/// The lowest set bit of `r` (0 for `r = 0`).
pub(crate) fn lowbit(r: u64) -> u64 {
    r & r.wrapping_neg()
}

/// `#{j < p : bit k of j is set}` (`k < 64`): `⌊p / 2^(k+1)⌋ 2^k + max(0, p mod 2^(k+1) - 2^k)`,
/// in `u128` so that `k = 63` does not overflow.
pub(crate) fn blocks_with_bit(p: u64, k: u32) -> u64 {
    let p = u128::from(p);
    let half = 1u128 << k.min(63);
    let full_periods = (p >> (k.min(63) + 1)) << k.min(63);
    let remainder = p & ((half << 1) - 1);
    // <= p, fits in u64
    (full_periods + remainder.saturating_sub(half)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logarithms() {
        for (p, c, f) in [
            (0, 0, 0),
            (1, 0, 0),
            (2, 1, 1),
            (3, 2, 1),
            (4, 2, 2),
            (5, 3, 2),
        ] {
            assert_eq!((ceil_log2(p), floor_log2(p)), (c, f), "P = {p}");
        }
        assert_eq!(ceil_log2(u64::MAX), 64);
        assert_eq!(floor_log2(u64::MAX), 63);
        assert_eq!(ceil_log2(1 << 63), 63);
        assert_eq!(ceil_log2((1 << 63) + 1), 64);
    }

    #[test]
    fn lowest_bit() {
        assert_eq!(lowbit(12), 4);
        assert_eq!(lowbit(1 << 63), 1 << 63);
        assert_eq!(lowbit(0), 0);
    }

    #[test]
    fn blocks_with_bit_counts_indices() {
        for p in 0..70u64 {
            for k in 0..8 {
                let direct = (0..p).filter(|j| j >> k & 1 == 1).count() as u64;
                assert_eq!(blocks_with_bit(p, k), direct, "P = {p}, k = {k}");
            }
        }
        // j < 2^64 - 1 with bit 63 set: 2^63 ..= 2^64 - 2; odd j: 1, 3, ..., 2^64 - 3
        assert_eq!(blocks_with_bit(u64::MAX, 63), (1 << 63) - 1);
        assert_eq!(blocks_with_bit(u64::MAX, 0), (1 << 63) - 1);
    }
}
