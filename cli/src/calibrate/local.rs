//! `calibrate local`: the local work of collectives on this machine, written into a model file.

use std::path::PathBuf;
use std::time::Duration;

use commcost::calibrate::relative_errors;
use commcost::probe::{Budget, CopyKind, CopyPlan, Methodology, measure_copies};
use serde_json::Map;

use super::{advance, pct, progress_bar};
use crate::Failure;
use crate::model::{LocalSection, ModelFile, Provenance, host_name, now_utc, write_file};
use crate::units::{self, human_time};

/// Cache capacities (L2, L3 unified or data caches) of CPU 0 from sysfs; empty where unknown.
fn cache_sizes() -> Vec<u64> {
    let mut out = Vec::new();
    for index in 0..8 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{index}");
        let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).ok();
        let (Some(level), Some(size), Some(kind)) = (read("level"), read("size"), read("type"))
        else {
            continue;
        };
        if kind.trim() == "Instruction" || !matches!(level.trim(), "2" | "3") {
            continue;
        }
        let size = size.trim();
        let (digits, unit) = size.split_at(
            size.find(|c: char| !c.is_ascii_digit())
                .unwrap_or(size.len()),
        );
        let Ok(n) = digits.parse::<u64>() else {
            continue;
        };
        let bytes = match unit {
            "K" => n.checked_mul(1 << 10),
            "M" => n.checked_mul(1 << 20),
            "" => Some(n),
            _ => None,
        };
        out.extend(bytes);
    }
    out.sort_unstable();
    out.dedup();
    out
}

pub(super) fn local(
    into: &std::path::Path,
    output: Option<PathBuf>,
    quick: bool,
) -> Result<(), Failure> {
    use commcost::calibrate::fit_local_work;
    use commcost::probe::{LocalKind, measure_local};
    let mut file = ModelFile::read(into).map_err(|e| {
        Failure(format!(
            "--into needs a model file written by `commcost calibrate`: {e}"
        ))
    })?;
    let methodology = if quick {
        Methodology::quick()
    } else {
        Methodology::standard()
    };
    let largest: u32 = if quick { 24 } else { 26 };
    let budget = Budget::new(Duration::from_secs(300), 4 << largest);
    // copies 64 B .. 16 (64) MiB, every power of four; held out: 1.5 times each
    let sizes: Vec<u64> = (3..=largest / 2).map(|k| 1u64 << (2 * k)).collect();
    let held_sizes: Vec<u64> = sizes[..sizes.len() - 1].iter().map(|s| s / 2 * 3).collect();
    let caches = cache_sizes();
    let mut starts: Vec<u64> = vec![0];
    // a copy reads one buffer and writes another: it fits a cache of twice its size
    for c in &caches {
        let from = c / 2;
        if from > *starts.last().unwrap_or(&0)
            && starts.len() < commcost::collectives::MAX_COPY_CLASSES
        {
            starts.push(from);
        }
    }
    let bar = progress_bar(0, "copies");
    let mut progress = advance(&bar);
    let plan = |sizes: &[u64]| CopyPlan {
        element: 8,
        sizes: sizes.to_vec(),
        strides: vec![],
        kinds: vec![CopyKind::Contiguous],
    };
    let copies = measure_copies(&plan(&sizes), &methodology, &budget, &mut progress)?;
    let held = measure_copies(&plan(&held_sizes), &methodology, &budget, &mut progress)?;
    bar.finish();
    let local_sizes: Vec<u64> = (6..=10).map(|k| 1u64 << (2 * k)).collect();
    let bar = progress_bar(0, "buffers and operator");
    let mut progress = advance(&bar);
    let samples = measure_local(
        &local_sizes,
        &[LocalKind::TempBuffer, LocalKind::SumF32],
        &methodology,
        &budget,
        &mut progress,
    )?;
    bar.finish();
    let pick = |k: LocalKind| -> Vec<(u64, f64)> {
        samples
            .iter()
            .filter(|s| s.kind == k)
            .map(|s| (s.bytes, s.time))
            .collect()
    };
    let copy_pairs: Vec<(u64, f64)> = copies.iter().map(|s| (s.size, s.time)).collect();
    let (work, operator) = fit_local_work(
        &copy_pairs,
        &starts,
        &pick(LocalKind::TempBuffer),
        &pick(LocalKind::SumF32),
    )?;
    let held_pairs: Vec<(f64, f64)> = held
        .iter()
        .map(|s| (work.copy().cost(s.size), s.time))
        .collect();
    let mut acc = Map::new();
    if let Some(e) = relative_errors(&held_pairs) {
        acc.insert("held_out_copies".into(), pct(e));
    }
    let mut roles = Map::new();
    roles.insert(
        "copy".into(),
        "copy(b) = per_call + b * rate of the last class starting at or below b (s, s/byte); classes start at 0 and at half of each L2/L3 cache size".into(),
    );
    roles.insert(
        "temp_buffer".into(),
        "allocating and releasing one temporary buffer (s)".into(),
    );
    roles.insert(
        "operator".into(),
        "op(b) = per_call + per_byte * b: y[i] += x[i] on f32 (MPI_SUM on MPI_FLOAT)".into(),
    );
    let measured = format!(
        "contiguous copies of {} sizes 64 B..{} MiB (held out: {} sizes between them), \
         allocation and release of buffers and a f32 sum at {} sizes 4 KiB..1 MiB; caches {:?} bytes",
        sizes.len(),
        sizes.last().copied().unwrap_or(0) >> 20,
        held_sizes.len(),
        local_sizes.len(),
        caches
    );
    // call costs fitted earlier (`calibrate collectives`) stay
    let (calls, calls_provenance) = match file.local.take() {
        Some(old) => (*old.work.calls(), old.calls_provenance),
        None => (commcost::collectives::CallCosts::NONE, None),
    };
    file.local = Some(LocalSection {
        work: work.with_calls(calls),
        operator,
        calls_provenance,
        provenance: Provenance {
            measured,
            method: "per-class median copy rate above the smallest copy's time, median buffer \
                     time, least-squares operator line (commcost::calibrate::fit_local_work)"
                .into(),
            date: now_utc(),
            host: host_name(),
            inputs: vec![],
            parameters: roles,
            accuracy: acc.clone(),
            adjustments: vec![],
            tool: format!("commcost {}", env!("CARGO_PKG_VERSION")),
        },
    });
    let path = output.unwrap_or_else(|| into.to_path_buf());
    write_file(&path, &file)?;
    outln!("wrote {} (local work)", path.display());
    for &(from, rate) in work.copy().classes() {
        outln!(
            "  copies from {}: {:.3} ns/B (+ {} per copy)",
            units::human_bytes(from),
            rate * 1e9,
            human_time(work.copy().per_call())
        );
    }
    outln!("  temporary buffer: {}", human_time(work.temp_buffer()));
    outln!(
        "  operator: {} + {:.3} ns/B",
        human_time(operator.cost(0)),
        (operator.cost(1 << 20) - operator.cost(0)) / f64::from(1u32 << 20) * 1e9
    );
    if let Some(v) = acc.get("held_out_copies") {
        outln!("  held-out copies: {v}");
    }
    Ok(())
}
