//! Reading a benchmark's output file (OSU Micro-Benchmarks, Intel MPI Benchmarks) within a
//! bound: the one reader behind the command-line tool's and the Python package's importers.

use std::path::Path;

use super::{BenchmarkSeries, CalibrationError, parse_imb, parse_osu};
use crate::limits::{MAX_BENCHMARK_FILE_BYTES, read_text_file};

/// Which benchmark's output a file must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchmarkFormat {
    /// OSU Micro-Benchmarks ([`parse_osu`]): one series.
    Osu,
    /// Intel MPI Benchmarks ([`parse_imb`]): one series per benchmark in the file.
    Imb,
    /// Either, recognised by its content (IMB's `# Benchmarking` or its banner).
    Any,
}

/// Reads a benchmark output file into its series: a regular file of at most
/// [`MAX_BENCHMARK_FILE_BYTES`] bytes ([`read_text_file`]: a FIFO or device is refused before
/// reading, a larger file is refused, never cut), parsed as `format` demands.
///
/// # Errors
///
/// [`CalibrationError::File`] when the file cannot be read within the bound;
/// [`CalibrationError::InFile`] naming the file and the line when its content does not parse.
///
/// # Examples
///
/// ```
/// use commcost::calibrate::{BenchmarkFormat, SeriesKind, read_benchmark_file};
///
/// let path = std::env::temp_dir().join(format!("commcost-osu-{}.txt", std::process::id()));
/// std::fs::write(&path, "# OSU MPI Latency Test v5.3\n# Size          Latency (us)\n\
///                        1                       1.50\n1024                    3.00\n")?;
/// let series = read_benchmark_file(&path, BenchmarkFormat::Any)?;
/// assert_eq!(series[0].kind, SeriesKind::Latency);
/// assert_eq!(series[0].points.len(), 2);
/// std::fs::write(&path, "# OSU MPI Latency Test v5.3\n# Size          Latency (us)\n1 x\n")?;
/// let error = read_benchmark_file(&path, BenchmarkFormat::Osu).unwrap_err();
/// assert!(error.to_string().contains("line 3"), "{error}");
/// std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_benchmark_file(
    path: &Path,
    format: BenchmarkFormat,
) -> Result<Vec<BenchmarkSeries>, CalibrationError> {
    let text = read_text_file(path, "benchmark output file", MAX_BENCHMARK_FILE_BYTES)?;
    let imb = match format {
        BenchmarkFormat::Osu => false,
        BenchmarkFormat::Imb => true,
        BenchmarkFormat::Any => {
            text.contains("# Benchmarking") || text.contains("Intel(R) MPI Benchmarks")
        }
    };
    let parsed = if imb {
        parse_imb(&text)
    } else {
        parse_osu(&text).map(|s| vec![s])
    };
    parsed.map_err(|e| CalibrationError::InFile {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}
