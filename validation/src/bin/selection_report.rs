//! Prints a selection report per `scripts/selection_sweep.sh` output file (the data behind the
//! selection table of docs/ACCURACY.md).
//!
//! ```sh
//! cargo run -p commcost-validation --bin selection_report -- tests/fixtures/selection/*.csv
//! ```
//!
//! Per file: the per-collective and per-cell tables over 8 B … 1 MiB (barrier always), and the
//! targets the measurements miss.

use std::io::Write;
use std::process::ExitCode;

use commcost_validation::selection::{Targets, parse, report};

/// Largest file read (the sweeps write a few hundred KiB).
const MAX_FILE: u64 = 64 << 20;

fn main() -> ExitCode {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        eprintln!("usage: selection_report FILE.csv...");
        return ExitCode::from(2);
    }
    for path in &paths {
        let text = match std::fs::metadata(path) {
            Ok(m) if m.is_file() && m.len() <= MAX_FILE => std::fs::read_to_string(path),
            Ok(_) => Err(std::io::Error::other(format!(
                "not a regular file of at most {MAX_FILE} bytes"
            ))),
            Err(e) => Err(e),
        };
        let text = match text {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{path}: {e}");
                return ExitCode::FAILURE;
            }
        };
        let r = match parse(&text)
            .map_err(|e| e.to_string())
            .and_then(|rows| report(&rows, 8, 1 << 20).map_err(|e| e.to_string()))
        {
            Ok(r) => r,
            Err(e) => {
                eprintln!("{path}: {e}");
                return ExitCode::FAILURE;
            }
        };
        let mut out = r.markdown();
        out.push('\n');
        let misses = r.misses(&Targets::default());
        if misses.is_empty() {
            out.push_str("All targets met.\n\n");
        } else {
            out.push_str("Targets missed:\n\n");
            for m in misses {
                out.push_str(&format!("- {m}\n"));
            }
            out.push('\n');
        }
        // a closed pipe (`| head`) ends the report quietly
        let mut stdout = std::io::stdout().lock();
        if writeln!(stdout, "{out}").is_err() {
            return ExitCode::SUCCESS;
        }
    }
    ExitCode::SUCCESS
}
