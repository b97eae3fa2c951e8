//! Prints the table of docs/ACCURACY.md ("Does `commcost tune` make Open MPI faster?") for one
//! sweep of rules files against an oracle sweep of every forced algorithm.
//!
//! ```sh
//! cargo run -p commcost-validation --bin tune_report -- RUNS.csv ORACLE.csv P
//! ```

use std::process::ExitCode;

use commcost_validation::selection::parse;
use commcost_validation::tune_validation::tune_table;

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

fn run(args: &[String]) -> Result<String, String> {
    let [runs, oracle, procs] = args else {
        return Err("usage: tune_report RUNS.csv ORACLE.csv P".into());
    };
    let procs: u32 = procs
        .parse()
        .map_err(|_| format!("P: `{procs}` is not a process count"))?;
    let runs_rows = parse(&read(runs)?).map_err(|e| format!("{runs}: {e}"))?;
    let oracle_rows = parse(&read(oracle)?).map_err(|e| format!("{oracle}: {e}"))?;
    let t = tune_table(&runs_rows, &oracle_rows, procs, 8, 1 << 20)?;
    Ok(t.markdown())
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
