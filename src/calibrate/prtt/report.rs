//! The assessment's report for people ([`LogGPAssessment`]'s `Display`).

use super::LogGPAssessment;
use crate::calibrate::Parameter;

/// A report for people: one line per protocol range (`L`, `o`, `g` in µs, `G` in µs/B, as
/// LogGP's `p2p` uses them), then the detected switches and the end-to-end latency. The
/// alternate form (`{:#}`) adds the per-size table the ranges were cut from: `G_all(s)` and
/// `o(s)` in µs with each size's range (`*`: left out as an outlier, `-`: a Netgauge change
/// point).
///
/// # Examples
///
/// ```
/// use commcost::calibrate::{AssessmentConfig, assess_loggp};
/// use commcost::probe::{PrttPlan, SimulatedProber, measure_prtt};
/// use commcost::{LogGP, Protocols};
///
/// // an exact (noise-free) single-protocol LogGP link: L = 5 µs, o = 1.5 µs, g = 4 µs,
/// // G = 0.5 ns/B — the report must give back exactly these
/// let truth = Protocols::single(LogGP::new(5e-6, 1.5e-6, 4e-6, 0.5e-9)?);
/// let mut prober = SimulatedProber::new(truth, 0.0, 1);
/// let plan = PrttPlan { sizes: (0..20).map(|k| 1 + 1024 * k).collect(), n: 16, passes: 1, seed: 1 };
/// let measured = measure_prtt(&mut prober, &plan)?;
/// let report = assess_loggp(&measured.samples, &AssessmentConfig::default())?.to_string();
/// assert!(report.contains("L = 5.000 µs, o = 1.500 µs, g = 4.000 µs, G = 0.000500 µs/B"));
/// assert!(report.contains("protocol switches detected: none"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl std::fmt::Display for LogGPAssessment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for r in &self.ranges {
            let m = self.model.model_for(r.first_size);
            write!(
                f,
                "  {:>8} … {:>8} B: L = {:.3} µs, o = {:.3} µs, g = {:.3} µs, G = {:.6} µs/B",
                r.first_size,
                r.last_size,
                m.latency() * 1e6,
                m.overhead() * 1e6,
                m.gap() * 1e6,
                m.gap_per_byte() * 1e6
            )?;
            // the burst line alone, where the model's g, G are not it
            let differs = |a: f64, b: f64| (a - b).abs() > 1e-9 * a.abs().max(b.abs());
            if differs(r.burst_gap, r.gap) || differs(r.burst_gap_per_byte, r.gap_per_byte) {
                write!(
                    f,
                    " (G_all alone: g = {:.3} µs, G = {:.6} µs/B)",
                    r.burst_gap * 1e6,
                    r.burst_gap_per_byte * 1e6
                )?;
            }
            writeln!(f)?;
        }
        if f.alternate() {
            writeln!(
                f,
                "  {:>8} {:>12} {:>12} {:>6}",
                "size", "G_all (µs)", "o(s) (µs)", "range"
            )?;
            for d in &self.sizes {
                let range = d.range.map_or("-".to_string(), |r| {
                    format!("{r}{}", if d.outlier { "*" } else { "" })
                });
                writeln!(
                    f,
                    "  {:>8} {:>12.4} {:>12.4} {:>6}",
                    d.size,
                    d.cumulative_gap * 1e6,
                    d.overhead * 1e6,
                    range
                )?;
            }
        }
        let switches: Vec<String> = self
            .model
            .switch_points()
            .map(|s| format!("{s} B"))
            .collect();
        for a in &self.adjustments {
            writeln!(
                f,
                "  adjusted {}{}: fitted {:.6} -> {:.6} µs{} ({})",
                a.parameter,
                a.range.map_or(String::new(), |r| format!(" of range {r}")),
                a.fitted * 1e6,
                a.used * 1e6,
                if a.parameter == Parameter::GapPerByte {
                    "/B"
                } else {
                    ""
                },
                a.how
            )?;
        }
        let w = &self.one_way;
        writeln!(
            f,
            "  PRTT(1,0,s)/2 relative error, median (90th): LogGP {:.1} % ({:.1} %), pLogP {:.1} % ({:.1} %), direct two-piece line fit {:.1} % ({:.1} %, break at {} B)",
            w.loggp_median * 100.0,
            w.loggp_p90 * 100.0,
            w.plogp_median * 100.0,
            w.plogp_p90 * 100.0,
            w.baseline_median * 100.0,
            w.baseline_p90 * 100.0,
            w.baseline_break
        )?;
        writeln!(
            f,
            "  G_all(s) relative error, median (90th): LogGP {:.1} % ({:.1} %), per-range lines through G_all alone {:.1} % ({:.1} %)",
            w.loggp_burst_median * 100.0,
            w.loggp_burst_p90 * 100.0,
            w.burst_fit_median * 100.0,
            w.burst_fit_p90 * 100.0
        )?;
        write!(
            f,
            "  protocol switches detected: {}; end-to-end latency {:.3} µs",
            if switches.is_empty() {
                "none".to_string()
            } else {
                switches.join(", ")
            },
            self.end_to_end_latency * 1e6
        )
    }
}
