//! How a schedule's operations are laid out: stored arrays, or a layout that computes each
//! operation's facts from its position.
//!
//! A [`Schedule`](super::Schedule) holds one [`Operations`]; everything that reads operations
//! (the schedule's accessors, the simulator) goes through the [`Layout`] trait, and the
//! simulator runs monomorphized on the concrete layout ([`Operations::visit`]). A new computed
//! layout is a new variant here and its `Layout` impl; `Schedule` and the engine stay as they
//! are.

use std::collections::VecDeque;

use super::implicit::RecursiveDoublingAllreduce;
use super::op::START_EDGE;

/// The facts of a schedule's operations, by internal position.
pub(crate) trait Layout {
    /// Number of operations.
    fn len(&self) -> usize;
    /// Number of dependencies.
    fn dependencies(&self) -> usize;
    /// The signature index (into the schedule's signature table) of operation `i`.
    fn signature(&self, i: usize) -> u32;
    /// The rank of operation `i` (internal number).
    fn rank(&self, i: usize) -> u32;
    /// The matched operation of a send or receive, `NONE` for a calc.
    fn partner(&self, i: usize) -> u32;
    /// `(signature index, rank, partner)` of operation `i`.
    #[inline]
    fn describe(&self, i: usize) -> (u32, u32, u32) {
        (self.signature(i), self.rank(i), self.partner(i))
    }
    /// Calls `f` with each successor entry of `i` (position, `START_EDGE` set for an
    /// `irequires`), in order.
    fn for_each_successor(&self, i: usize, f: impl FnMut(u32));
    /// The successor entries of `i`, in order (as [`for_each_successor`](Self::for_each_successor)).
    fn successors(&self, i: usize) -> Successors<'_>;
    /// Sets `node` to the operations' initial states (`N::default()` with `*count(node)` its
    /// number of dependencies) and appends the operations without dependencies to `ready`, in
    /// operation order; `false` if an operation has more than `max` dependencies.
    fn initial_state<N: Default + Clone>(
        &self,
        node: &mut Vec<N>,
        count: impl Fn(&mut N) -> &mut u32,
        max: u32,
        ready: &mut VecDeque<u32>,
    ) -> bool;
    /// The bytes the layout's own arrays hold (capacity, not length).
    fn heap_bytes(&self) -> u128;
}

/// The successor entries of one operation: a stored list, or consecutive positions.
#[derive(Debug, Clone)]
pub(crate) enum Successors<'a> {
    /// Stored entries.
    Stored(std::iter::Copied<std::slice::Iter<'a, u32>>),
    /// Consecutive positions, all `requires`.
    Consecutive(std::ops::Range<u32>),
}

impl Iterator for Successors<'_> {
    type Item = u32;
    #[inline]
    fn next(&mut self) -> Option<u32> {
        match self {
            Self::Stored(x) => x.next(),
            Self::Consecutive(x) => x.next(),
        }
    }
}

/// Calls the layout-generic code of [`Operations::visit`] with the concrete layout.
pub(crate) trait LayoutVisitor {
    /// What the visit returns.
    type Output;
    /// Runs on layout `l`.
    fn visit<L: Layout>(self, l: &L) -> Self::Output;
}

/// A schedule's operations.
#[derive(Debug, Clone)]
pub(crate) enum Operations {
    /// Stored arrays (every schedule built by [`ScheduleBuilder`](super::ScheduleBuilder)).
    Stored(Stored),
    /// The recursive-doubling allreduce, computed.
    RecursiveDoublingAllreduce(RecursiveDoublingAllreduce),
}

impl Operations {
    /// Runs `v` on the concrete layout (monomorphized per layout).
    #[inline]
    pub(crate) fn visit<V: LayoutVisitor>(&self, v: V) -> V::Output {
        match self {
            Self::Stored(x) => v.visit(x),
            Self::RecursiveDoublingAllreduce(x) => v.visit(x),
        }
    }

    /// Whether the operations are computed, not stored.
    #[cfg(test)]
    pub(crate) fn is_computed(&self) -> bool {
        !matches!(self, Self::Stored(_))
    }
}

/// Dispatches each method of [`Layout`] to the concrete layout.
macro_rules! dispatch {
    ($self:ident, $x:ident => $e:expr) => {
        match $self {
            Operations::Stored($x) => $e,
            Operations::RecursiveDoublingAllreduce($x) => $e,
        }
    };
}

impl Layout for Operations {
    fn len(&self) -> usize {
        dispatch!(self, x => Layout::len(x))
    }
    fn dependencies(&self) -> usize {
        dispatch!(self, x => Layout::dependencies(x))
    }
    #[inline]
    fn signature(&self, i: usize) -> u32 {
        dispatch!(self, x => Layout::signature(x, i))
    }
    #[inline]
    fn rank(&self, i: usize) -> u32 {
        dispatch!(self, x => Layout::rank(x, i))
    }
    #[inline]
    fn partner(&self, i: usize) -> u32 {
        dispatch!(self, x => Layout::partner(x, i))
    }
    fn for_each_successor(&self, i: usize, f: impl FnMut(u32)) {
        dispatch!(self, x => Layout::for_each_successor(x, i, f))
    }
    fn successors(&self, i: usize) -> Successors<'_> {
        dispatch!(self, x => Layout::successors(x, i))
    }
    fn initial_state<N: Default + Clone>(
        &self,
        node: &mut Vec<N>,
        count: impl Fn(&mut N) -> &mut u32,
        max: u32,
        ready: &mut VecDeque<u32>,
    ) -> bool {
        dispatch!(self, x => Layout::initial_state(x, node, count, max, ready))
    }
    fn heap_bytes(&self) -> u128 {
        dispatch!(self, x => Layout::heap_bytes(x))
    }
}

/// A schedule's stored per-operation arrays, in internal order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Stored {
    /// Kind, tag and message class: an index into the schedule's signatures.
    pub(crate) sig: Vec<u32>,
    /// The rank of each operation, numbered in the order the ranks first appear in internal
    /// order (the schedule maps the numbers back to ranks).
    pub(crate) rank: Vec<u32>,
    /// The operations without dependencies, in operation order.
    pub(crate) roots: Vec<u32>,
    /// The internal position of the matched operation of a send or receive (its rank is the
    /// peer), `NONE` for a calc.
    pub(crate) partner: Vec<u32>,
    /// `successors[offsets[i]..offsets[i+1]]`: the internal positions of the operations that
    /// depend on `i` (top bit: `irequires`).
    pub(crate) offsets: Vec<u32>,
    pub(crate) successors: Vec<u32>,
}

impl Layout for Stored {
    fn len(&self) -> usize {
        self.sig.len()
    }
    fn dependencies(&self) -> usize {
        self.successors.len()
    }
    #[inline]
    fn signature(&self, i: usize) -> u32 {
        self.sig[i]
    }
    #[inline]
    fn rank(&self, i: usize) -> u32 {
        self.rank[i]
    }
    #[inline]
    fn partner(&self, i: usize) -> u32 {
        self.partner[i]
    }
    #[inline]
    fn for_each_successor(&self, i: usize, mut f: impl FnMut(u32)) {
        let (a, b) = (self.offsets[i] as usize, self.offsets[i + 1] as usize);
        for &e in &self.successors[a..b] {
            f(e);
        }
    }
    fn successors(&self, i: usize) -> Successors<'_> {
        let (a, b) = (self.offsets[i] as usize, self.offsets[i + 1] as usize);
        Successors::Stored(self.successors[a..b].iter().copied())
    }
    fn initial_state<N: Default + Clone>(
        &self,
        node: &mut Vec<N>,
        count: impl Fn(&mut N) -> &mut u32,
        max: u32,
        ready: &mut VecDeque<u32>,
    ) -> bool {
        node.clear();
        node.resize(self.sig.len(), N::default());
        for &e in &self.successors {
            let pending = count(&mut node[(e & !START_EDGE) as usize]);
            if *pending == max {
                return false;
            }
            *pending += 1;
        }
        ready.extend(self.roots.iter().copied());
        true
    }
    fn heap_bytes(&self) -> u128 {
        let words = self.sig.capacity()
            + self.rank.capacity()
            + self.roots.capacity()
            + self.partner.capacity()
            + self.offsets.capacity()
            + self.successors.capacity();
        4 * words as u128
    }
}

impl Layout for RecursiveDoublingAllreduce {
    #[inline(always)]
    fn len(&self) -> usize {
        RecursiveDoublingAllreduce::len(self)
    }
    #[inline(always)]
    fn dependencies(&self) -> usize {
        RecursiveDoublingAllreduce::dependencies(self)
    }
    #[inline(always)]
    fn signature(&self, i: usize) -> u32 {
        RecursiveDoublingAllreduce::signature(self, i)
    }
    #[inline(always)]
    fn rank(&self, i: usize) -> u32 {
        RecursiveDoublingAllreduce::rank(self, i)
    }
    #[inline(always)]
    fn partner(&self, i: usize) -> u32 {
        RecursiveDoublingAllreduce::partner(self, i)
    }
    #[inline(always)]
    fn describe(&self, i: usize) -> (u32, u32, u32) {
        RecursiveDoublingAllreduce::describe(self, i)
    }
    #[inline(always)]
    fn for_each_successor(&self, i: usize, mut f: impl FnMut(u32)) {
        let range = RecursiveDoublingAllreduce::successors(self, i);
        let mut s = range.start;
        while s < range.end {
            f(s);
            s += 1;
        }
    }
    fn successors(&self, i: usize) -> Successors<'_> {
        Successors::Consecutive(RecursiveDoublingAllreduce::successors(self, i))
    }
    fn initial_state<N: Default + Clone>(
        &self,
        node: &mut Vec<N>,
        count: impl Fn(&mut N) -> &mut u32,
        max: u32,
        ready: &mut VecDeque<u32>,
    ) -> bool {
        // one count per operation, in order: each state written once (no zeroing pass first),
        // the roots found on the way (internal order is operation order)
        let n = RecursiveDoublingAllreduce::len(self);
        node.clear();
        node.reserve(n);
        let mut fits = true;
        self.dependency_counts(|i, d| {
            fits &= d <= max;
            let mut x = N::default();
            *count(&mut x) = d.min(max);
            node.push(x);
            if d == 0 {
                ready.push_back(i as u32);
            }
        });
        fits && node.len() == n
    }
    fn heap_bytes(&self) -> u128 {
        0
    }
}
