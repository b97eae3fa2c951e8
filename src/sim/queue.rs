//! The simulator's event queue: a monotone radix heap of event times, and the bitmap sort that
//! orders the events of one time.

/// A monotone priority queue of `(key, code)`: a radix heap, entries in buckets by the highest
/// bit in which their key differs from the last minimum (R. K. Ahuja,
/// K. Mehlhorn, J. B. Orlin, R. E. Tarjan, "Faster algorithms for the shortest path problem",
/// JACM 37(2), 1990). Keys never decrease below the last popped one, which holds for event
/// times; push is O(1), a pop moves each entry at most 64 times over its life, and entries live
/// in a few reused vectors. Entries are 12 bytes; those whose key is the last minimum (bucket 0)
/// keep only their 4-byte code.
#[derive(Default)]
pub(super) struct RadixQueue {
    last: u64,
    len: usize,
    /// Bucket 0: the codes of the entries whose key is `last`.
    current: Vec<u32>,
    /// Buckets 1 to 64 (index `i - 1`).
    buckets: Vec<Vec<Entry>>,
    /// The storage of large buckets that were emptied (at most [`SPARES`]), lent to the next
    /// bucket that outgrows its own: the queue holds room for the events in flight, not for
    /// the largest size every bucket ever had.
    spare: Vec<Vec<Entry>>,
}

/// How many emptied bucket vectors the queue keeps for reuse.
const SPARES: usize = 2;
/// Emptied bucket vectors with room for at least this many entries go to the spares.
const LARGE_BUCKET: usize = 1 << 12;

/// One pending event: its time's bits and its code (12 bytes).
#[derive(Clone, Copy)]
#[repr(C, packed(4))]
struct Entry {
    key: u64,
    code: u32,
}

impl RadixQueue {
    /// Empties the queue, keeping its vectors.
    pub(super) fn reset(&mut self) {
        self.last = 0;
        self.len = 0;
        self.current.clear();
        self.buckets.resize_with(64, Vec::new);
        for b in &mut self.buckets {
            b.clear();
        }
    }

    /// The entries the queue's vectors hold room for.
    pub(super) fn capacity(&self) -> usize {
        self.current.capacity()
            + self
                .buckets
                .iter()
                .chain(&self.spare)
                .map(Vec::capacity)
                .sum::<usize>()
    }

    #[inline]
    fn bucket(x: u64) -> usize {
        64 - x.leading_zeros() as usize
    }

    /// `key >= ` the last popped key.
    #[inline]
    pub(super) fn push(&mut self, key: u64, code: u32) {
        match Self::bucket(key ^ self.last) {
            0 => self.current.push(code),
            i => self.put(i - 1, Entry { key, code }),
        }
        self.len += 1;
    }

    /// Appends `entry` to `buckets[j]`, first moving the bucket into the largest spare vector
    /// when it is full and the spare is larger.
    #[inline]
    fn put(&mut self, j: usize, entry: Entry) {
        let b = &self.buckets[j];
        if b.len() == b.capacity() && !self.spare.is_empty() {
            self.lend(j);
        }
        self.buckets[j].push(entry);
    }

    #[cold]
    fn lend(&mut self, j: usize) {
        let Some((k, _)) = self
            .spare
            .iter()
            .enumerate()
            .max_by_key(|(_, v)| v.capacity())
        else {
            return;
        };
        if self.spare[k].capacity() > self.buckets[j].capacity() {
            let mut v = self.spare.swap_remove(k);
            v.extend_from_slice(&self.buckets[j]);
            // the smaller vector is freed
            self.buckets[j] = v;
        }
    }

    /// Keeps an emptied bucket vector: large ones as spares (the smallest freed when there are
    /// more than [`SPARES`]), others in bucket `i` again.
    fn stash(&mut self, i: usize, items: Vec<Entry>) {
        if items.capacity() < LARGE_BUCKET {
            self.buckets[i] = items;
            return;
        }
        self.spare.push(items);
        if self.spare.len() > SPARES
            && let Some((k, _)) = self
                .spare
                .iter()
                .enumerate()
                .min_by_key(|(_, v)| v.capacity())
        {
            self.spare.swap_remove(k);
        }
    }

    /// Moves the codes of every entry with the smallest key into `out` (cleared first; its
    /// storage becomes the queue's, nothing is copied), in the order they were pushed; returns
    /// that key.
    pub(super) fn pop_batch(&mut self, out: &mut Vec<u32>) -> Option<u64> {
        if self.len == 0 {
            return None;
        }
        if self.current.is_empty() {
            let i = (0..64).find(|&i| !self.buckets[i].is_empty())?;
            let mut items = std::mem::take(&mut self.buckets[i]);
            let min = items.iter().map(|e| e.key).min()?;
            self.last = min;
            for e in &items {
                let (k, c) = (e.key, e.code);
                match Self::bucket(k ^ min) {
                    0 => self.current.push(c),
                    j => self.put(j - 1, Entry { key: k, code: c }),
                }
            }
            items.clear();
            self.stash(i, items);
        }
        out.clear();
        std::mem::swap(out, &mut self.current);
        self.len -= out.len();
        Some(self.last)
    }
}

/// Sorts a large batch of event codes of one time by a bitmap over them, when they are dense
/// enough; returns whether it did. An operation has at most one event of each kind at one
/// time, so the codes are distinct and the result is that of sorting them.
pub(super) fn sort_by_bitmap(batch: &mut [u32], bits: &mut Vec<u64>) -> bool {
    if batch.len() < 4096 {
        return false;
    }
    let (mut lo, mut hi) = (u32::MAX, 0);
    for &code in batch.iter() {
        lo = lo.min(code);
        hi = hi.max(code);
    }
    let span = u64::from(hi - lo) + 1;
    if span > 64 * batch.len() as u64 {
        return false;
    }
    let words = span.div_ceil(64) as usize;
    bits.clear();
    bits.resize(words, 0);
    for &code in batch.iter() {
        let i = code - lo;
        bits[(i / 64) as usize] |= 1 << (i % 64);
    }
    // (distinct codes, so this holds; checked rather than trusted)
    if bits.iter().map(|w| w.count_ones() as usize).sum::<usize>() != batch.len() {
        return false;
    }
    let mut slots = batch.iter_mut();
    for (w, &word) in bits.iter().enumerate() {
        let mut word = word;
        while word != 0 {
            // below `hi + 1`, so within u32
            let code = lo + 64 * w as u32 + word.trailing_zeros();
            word &= word - 1;
            if let Some(slot) = slots.next() {
                *slot = code;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bitmap sort orders a batch as the standard sort does (the oracle), and declines
    /// small, sparse or repeated batches.
    #[test]
    fn bitmap_sort_matches_the_standard_sort() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let code = |p: u64, kind: u64| ((p << 1) | kind) as u32;
        let mut bits = Vec::new();
        for (n, stride) in [(5000u64, 1u64), (10_000, 3), (4096, 2)] {
            let mut batch: Vec<u32> = (0..n)
                .flat_map(|i| [code(100 + i * stride, 0), code(100 + i * stride, 1)])
                .filter(|_| next() % 3 != 0)
                .collect();
            for i in (1..batch.len()).rev() {
                batch.swap(i, (next() % (i as u64 + 1)) as usize);
            }
            let mut expected = batch.clone();
            expected.sort_unstable();
            assert!(sort_by_bitmap(&mut batch, &mut bits));
            assert_eq!(batch, expected);
        }
        let mut small = vec![code(5, 0), code(3, 1)];
        assert!(!sort_by_bitmap(&mut small, &mut bits));
        let mut sparse: Vec<u32> = (0..5000).map(|i| code(i * 1000, 0)).collect();
        assert!(!sort_by_bitmap(&mut sparse, &mut bits));
        let mut repeated: Vec<u32> = (0..5000).map(|i| code(i % 10, 0)).collect();
        assert!(!sort_by_bitmap(&mut repeated, &mut bits));
    }
}
