//! The pricing grid every export walks: each (communicator size, message size) cell's
//! cheapest candidate, with ties resolved the same way for every file.

use crate::CommModel;
use crate::collectives::CollectiveError;
use crate::collectives::{self, LocalWork, Operator, Problem};

/// What an exported rule names where several algorithms (different Open MPI ids) tie for the
/// cheapest: equal costs within a relative `1e-9` — on 2 processes many algorithms send the
/// same single message, and no term of the model tells them apart. Variants of one algorithm
/// (segment sizes, fan-outs) that tie are not a tie between algorithms: the rule names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OnTie {
    /// The tied algorithm of the previous (smaller) message size if it is among them, else the
    /// first tied one in the collective's candidate order: every rule names an algorithm.
    #[default]
    FirstCandidate,
    /// Algorithm `0`: Open MPI's own fixed decision, which the file then leaves in place. The
    /// model has no preference between the tied algorithms, so it overrides Open MPI only where
    /// it has one.
    Defer,
}

/// A model priced on a grid of communicator sizes × message sizes.
pub(super) struct Grid<'a> {
    pub(super) model: &'a dyn CommModel,
    pub(super) processes: &'a [u64],
    pub(super) sizes: &'a [u64],
    pub(super) operator: Operator,
    pub(super) on_tie: OnTie,
    pub(super) min_gain: Option<f64>,
    pub(super) local: LocalWork,
    /// Price every candidate by simulation on nodes instead of by its closed form.
    pub(super) on_nodes: Option<super::ompi::OnNodes<'a>>,
}

/// Relative cost difference below which two algorithms count as equally fast.
const TIE: f64 = 1e-9;

/// The cheapest allowed candidate of `problem`. Candidates within a relative [`TIE`] of the
/// cheapest count as equal (on 2 processes many algorithms are the same single message, and
/// rounding must not make the file alternate between them): the one `keep` accepts (the
/// previous rule's algorithm) if it is among them, else the first in candidate order; and
/// every tied candidate.
pub(super) fn choose<A: collectives::Algorithm>(
    model: &dyn CommModel,
    problem: &Problem,
    allowed: impl Fn(&A) -> bool,
    keep: impl Fn(&A) -> bool,
) -> Result<(A, Vec<A>), CollectiveError> {
    choose_priced(model, problem, allowed, keep, |a: &A| {
        a.cost(model, problem)
    })
}

/// [`choose`] with each candidate priced by `price` instead of its closed form.
pub(super) fn choose_priced<A: collectives::Algorithm, E: From<CollectiveError>>(
    model: &dyn CommModel,
    problem: &Problem,
    allowed: impl Fn(&A) -> bool,
    keep: impl Fn(&A) -> bool,
    price: impl Fn(&A) -> Result<f64, E>,
) -> Result<(A, Vec<A>), E> {
    let mut priced = Vec::new();
    for a in A::candidates(model, problem) {
        if allowed(&a) {
            let cost = price(&a)?;
            priced.push((a, cost));
        }
    }
    let cheapest = priced.iter().map(|&(_, c)| c).fold(f64::INFINITY, f64::min);
    let limit = cheapest + cheapest.abs() * TIE;
    let ties: Vec<A> = priced
        .into_iter()
        .filter(|&(_, c)| c <= limit)
        .map(|(a, _)| a)
        .collect();
    let first = *ties.first().ok_or(CollectiveError::EmptyRange {
        what: "candidates",
        detail: format!("no allowed algorithm on {} processes", problem.processes),
    })?;
    let pick = ties.iter().copied().find(|a| keep(a)).unwrap_or(first);
    Ok((pick, ties))
}
