//! Tuning files that MPI libraries read: the model's best algorithms, in the library's terms.
//!
//! * [`ompi_rules`]: Open MPI's classic dynamic rules file for the tuned component (read by
//!   Open MPI 4.x and 5.x with `--mca coll_tuned_use_dynamic_rules 1 --mca
//!   coll_tuned_dynamic_rules_filename FILE`), from the algorithms of
//!   [`collectives::ompi`](crate::collectives::ompi).
//! * [`mpich_json`]: MPICH's collective selection JSON (`MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE`)
//!   from the textbook algorithms MPICH runs ([`MpichAlgorithm`](crate::collectives::MpichAlgorithm)),
//!   for a stated MPICH version ([`MpichVersion`]): complete (MPICH's own default decisions for
//!   what the model does not price) and guarded by each algorithm's preconditions.
//!
//! Both price every candidate of a collective at each (communicator size, message size) point
//! of a grid, take the cheapest, and merge neighbouring points with the same choice into
//! ranges. A choice made at grid point `(P_i, S_j)` applies to communicator sizes
//! `P_i <= P < P_{i+1}` and message sizes `S_j <= S < S_{j+1}`, as Open MPI applies its rules
//! (the last block with comm size `<= P`, the last rule with message size `<= S`); the first
//! message-size rule of each block is widened down to 0, and communicators smaller than the
//! first grid size are left to the library's own decision (Open MPI: no block applies, so its
//! fixed decision; MPICH: the file's first branch, `comm_size<P₁`, holds MPICH's default
//! subtree).
//!
//! Both reject a collective given twice, a communicator size above `2^31 - 1` (the MPI `int`
//! both libraries keep it in) and grids of more than [`MAX_CELLS`] cells.
//!
//! # Message sizes
//!
//! The `sizes` given are in the file's own convention for each collective
//! ([`Collective::ompi_rules_size`](crate::collectives::Collective::ompi_rules_size): `m P` for allgather, alltoall, gather and scatter; `m` for
//! the rest; barrier has one rule at 0). For MPICH, `avg_msg_size` is the buffer `m`
//! (per-pair block for alltoall) and `total_msg_size` (allgather, gather, scatter) is `m P`.

use crate::collectives::Collective;

mod error;
mod grid;
mod mpich;
mod ompi;
mod rules;

pub use error::ExportError;
pub use grid::OnTie;
pub(crate) use mpich::mpich_function_of;
pub use mpich::{
    MpichDecision, MpichJsonOptions, MpichVersion, mpich_decide, mpich_json,
    mpich_json_collectives, mpich_json_decided, mpich_size_key,
};
pub use ompi::{OmpiRulesOptions, OnNodes, ompi_fixed_rules, ompi_rules, ompi_rules_on_nodes};
pub use rules::{OmpiBlock, OmpiCollectiveRules, OmpiRule, OmpiRules};

/// The most grid cells (communicator sizes × message sizes × collectives) one export prices.
///
/// An export of the full default grid (`--procs 2..4096 --bytes 1..4M`, all collectives) is
/// about 3 000 cells; the bound keeps a mistaken list from running for minutes.
pub const MAX_CELLS: usize = 200_000;

/// The largest communicator size Open MPI and MPICH can hold (a C `int`).
pub const MAX_PROCESSES: u64 = i32::MAX as u64;

/// At most 80 characters of user input, for an error message.
fn echo(s: &str) -> String {
    if s.chars().count() <= 80 {
        s.to_string()
    } else {
        let head: String = s.chars().take(77).collect();
        format!("{head}...")
    }
}

/// No collective twice, no communicator size an MPI `int` cannot hold, a bounded grid.
pub(super) fn check_collectives(
    collectives: &[Collective],
    processes: &[u64],
    sizes: &[u64],
) -> Result<(), ExportError> {
    for (i, c) in collectives.iter().enumerate() {
        if collectives[..i].contains(c) {
            return Err(ExportError::Grid {
                what: "collectives",
                detail: format!("{} given twice", c.name()),
            });
        }
    }
    if let Some(&p) = processes.iter().find(|&&p| p > MAX_PROCESSES) {
        return Err(ExportError::Grid {
            what: "processes",
            detail: format!(
                "communicator size {p} is above {MAX_PROCESSES}, the largest an MPI library's `int` holds"
            ),
        });
    }
    let cells = processes
        .len()
        .saturating_mul(sizes.len())
        .saturating_mul(collectives.len());
    if cells > MAX_CELLS {
        return Err(ExportError::Grid {
            what: "grid",
            detail: format!(
                "{} communicator sizes × {} message sizes × {} collectives = {cells} cells, more than {MAX_CELLS}; use fewer sizes",
                processes.len(),
                sizes.len(),
                collectives.len()
            ),
        });
    }
    Ok(())
}

/// A non-empty, strictly increasing grid axis whose first value is at least `min`.
pub(super) fn check_grid(what: &'static str, axis: &[u64], min: u64) -> Result<(), ExportError> {
    if axis.is_empty() || axis.windows(2).any(|w| w[1] <= w[0]) {
        return Err(ExportError::Grid {
            what,
            detail: "must be non-empty and strictly increasing".into(),
        });
    }
    if axis[0] < min {
        return Err(ExportError::Grid {
            what,
            detail: format!("values must be at least {min}, got {}", axis[0]),
        });
    }
    Ok(())
}
