//! Prints the table of docs/ACCURACY.md ("Does `commcost tune` make Open MPI faster?") for one
//! sweep of rules files against an oracle sweep of every forced algorithm.
//!
//! ```sh
//! cargo run -p commcost-validation --bin tune_report -- P RUNS.csv ORACLE.csv... [-- P RUNS.csv ORACLE.csv...]
//! ```
//!
//! One platform: its table; several (separated by `--`): the platforms side by side.

use std::process::ExitCode;

use commcost_validation::selection::parse;
use commcost_validation::tune_validation::{TuneTable, combined_markdown, tune_table};

/// Largest file read (the sweeps write a few hundred KiB).
const MAX_FILE: u64 = 64 << 20;

fn read(path: &str) -> Result<String, String> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() && m.len() <= MAX_FILE => {
            std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))
        }
        Ok(_) => Err(format!(
            "{path}: not a regular file of at most {MAX_FILE} bytes"
        )),
        Err(e) => Err(format!("{path}: {e}")),
    }
}

const USAGE: &str = "usage: tune_report P RUNS.csv ORACLE.csv... [-- P RUNS.csv ORACLE.csv...]...";

/// One platform's table: `P RUNS.csv ORACLE.csv...`.
fn table(args: &[String]) -> Result<TuneTable, String> {
    let [procs, runs, oracles @ ..] = args else {
        return Err(USAGE.into());
    };
    if oracles.is_empty() {
        return Err(USAGE.into());
    }
    let procs: u32 = procs
        .parse()
        .map_err(|_| format!("P: `{procs}` is not a process count"))?;
    let runs_rows = parse(&read(runs)?).map_err(|e| format!("{runs}: {e}"))?;
    let mut oracle_rows = Vec::new();
    for o in oracles {
        oracle_rows.push(parse(&read(o)?).map_err(|e| format!("{o}: {e}"))?);
    }
    let refs: Vec<&[_]> = oracle_rows.iter().map(Vec::as_slice).collect();
    tune_table(&runs_rows, &refs, procs, 8, 1 << 20)
}

fn run(args: &[String]) -> Result<String, String> {
    let tables = args
        .split(|a| a == "--")
        .map(table)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(match tables.as_slice() {
        [one] => one.markdown(),
        many => combined_markdown(many),
    })
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("tune_report: {e}");
            ExitCode::FAILURE
        }
    }
}
