//! `calibrate tcp`: LogGP with protocol ranges of TCP loopback from parametrised round trips.

use std::path::PathBuf;
use std::time::Duration;

use commcost::calibrate::{AssessmentConfig, assess_loggp, relative_errors};
use commcost::probe::{Budget, Methodology, Prober, PrttPlan, TcpLoopbackProber, measure_prtt};
use commcost::{CommModel, Message};
use serde_json::Map;

use super::{Counting, adjustment_lines, describe_ranges, finish, loggp_roles, pct, progress_bar};
use crate::Failure;

pub(super) fn tcp(output: Option<PathBuf>, quick: bool) -> Result<(), Failure> {
    let methodology = if quick {
        Methodology::quick()
    } else {
        Methodology::standard()
    };
    let budget = Budget::new(Duration::from_secs(600), 1 << 30);
    let step = if quick { 8192 } else { 2048 };
    let sizes: Vec<u64> = std::iter::once(1)
        .chain((1..=65536 / step).map(|k| k * step))
        .collect();
    let passes = if quick { 2 } else { 3 };
    let plan = PrttPlan {
        sizes: sizes.clone(),
        n: 16,
        passes,
        seed: 11,
    };
    let mut prober = TcpLoopbackProber::start(65536 + 4096, methodology, budget)?;
    let bar = progress_bar((3 * sizes.len() * (passes + 1)) as u64, "TCP loopback PRTT");
    let mut counting = Counting {
        inner: &mut prober,
        bar: &bar,
    };
    let measured = measure_prtt(&mut counting, &plan)?;
    bar.finish();
    let assessment = assess_loggp(&measured.samples, &AssessmentConfig::default())?;
    describe_ranges(&assessment.model)?;
    // held out: half round trips between the grid's sizes
    let mut pairs = Vec::new();
    for s in sizes.iter().map(|&s| s + step / 2).filter(|&s| s <= 65536) {
        let half = prober.prtt(1, 0.0, s)? / 2.0;
        pairs.push((assessment.model.p2p(&Message::contiguous(s)), half));
    }
    let mut acc = Map::new();
    if let Some(e) = relative_errors(&pairs) {
        acc.insert("held_out_half_round_trips".into(), pct(e));
    }
    finish(
        output,
        assessment.model.into(),
        format!(
            "TCP loopback round trips PRTT(1,0,s), PRTT(16,0,s), PRTT(16,d,s), {} sizes 1..64 KiB, {passes} shuffled passes",
            sizes.len()
        ),
        "LogGP parameter assessment with protocol-change detection (Hoefler, Lichei & Rehm, \
         IPDPS 2007), commcost::calibrate::assess_loggp",
        vec![],
        loggp_roles(),
        acc,
        adjustment_lines(&assessment.adjustments),
    )
}
