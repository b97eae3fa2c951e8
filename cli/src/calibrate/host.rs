//! `calibrate host`: memory logP of this machine from timed copies and packs.

use std::path::PathBuf;
use std::time::Duration;

use commcost::calibrate::{CopyMeasurements, derive_memory_logp, relative_errors};
use commcost::probe::{Budget, CopyKind, CopyPlan, Methodology, measure_copies};
use commcost::{CommModel, Message};
use serde_json::Map;

use super::{advance, finish, pct, progress_bar};
use crate::Failure;

pub(super) fn host(output: Option<PathBuf>, quick: bool) -> Result<(), Failure> {
    let methodology = if quick {
        Methodology::quick()
    } else {
        Methodology::standard()
    };
    let budget = Budget::new(Duration::from_secs(600), 1 << 30);
    let strides: Vec<u64> = vec![24, 40, 80, 160, 320, 640, 1280];
    let sizes: Vec<u64> = (10..=if quick { 15 } else { 18 })
        .map(|k| 1u64 << k)
        .collect();
    let plan = CopyPlan {
        element: 8,
        sizes: sizes.clone(),
        strides: strides.clone(),
        kinds: vec![CopyKind::Contiguous, CopyKind::Pack],
    };
    let bar = progress_bar(0, "memory copies");
    let mut progress = advance(&bar);
    let samples = measure_copies(&plan, &methodology, &budget, &mut progress)?;
    bar.finish();
    let time_of = |kind: CopyKind, size: u64, stride: u64| {
        samples
            .iter()
            .find(|s| {
                s.kind == kind
                    && s.size == size
                    && (kind == CopyKind::Contiguous || s.stride == stride)
            })
            .map_or(f64::NAN, |s| s.time)
    };
    let contiguous: Vec<f64> = sizes
        .iter()
        .map(|&s| time_of(CopyKind::Contiguous, s, 8))
        .collect();
    let strided: Vec<Vec<f64>> = sizes
        .iter()
        .zip(&contiguous)
        .map(|(&s, &c)| {
            strides
                .iter()
                .map(|&d| time_of(CopyKind::Pack, s, d).max(c)) // faster than contiguous: noise
                .collect()
        })
        .collect();
    let memory = derive_memory_logp(&CopyMeasurements {
        sizes: sizes.clone(),
        contiguous,
        strides: strides.clone(),
        strided,
        element: 8,
    })?;
    // held out: sizes between the grid's, strides off the grid
    let held_plan = CopyPlan {
        element: 8,
        sizes: sizes[..sizes.len() - 1].iter().map(|s| s * 3 / 2).collect(),
        strides: vec![56, 112, 224, 448, 896],
        kinds: vec![CopyKind::Pack],
    };
    let bar = progress_bar(0, "held-out packs");
    let mut progress = advance(&bar);
    let held = measure_copies(&held_plan, &methodology, &budget, &mut progress)?;
    bar.finish();
    let pairs: Vec<(f64, f64)> = held
        .iter()
        .filter_map(|s| {
            let msg = Message::vector(s.size / 8, 8, s.stride).ok()?;
            Some((memory.p2p(&msg), s.time))
        })
        .collect();
    let mut acc = Map::new();
    if let Some(e) = relative_errors(&pairs) {
        acc.insert("held_out_packs".into(), pct(e));
    }
    let mut roles = Map::new();
    roles.insert(
        "o".into(),
        "o(s): time to copy s contiguous bytes (a table over sizes, s)".into(),
    );
    roles.insert(
        "l".into(),
        "l(s, d): extra time to pack s bytes of 8-byte elements at stride d (a table, s)".into(),
    );
    finish(
        output,
        memory.into(),
        format!(
            "memory copies and packs of 8-byte elements, {} sizes 1 KiB..{} KiB, strides {:?} bytes",
            sizes.len(),
            sizes.last().copied().unwrap_or(0) / 1024,
            strides
        ),
        "memory logP derivation from copy timings (Cameron & Sun, IPDPS 2003), \
         commcost::calibrate::derive_memory_logp",
        vec![],
        roles,
        acc,
        vec![],
    )
}
