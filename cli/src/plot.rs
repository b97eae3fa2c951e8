//! `plot`: cost curves over message size as SVG.

use std::path::{Path, PathBuf};

use commcost::calibrate::{BenchmarkSeries, SeriesKind};
use commcost::collectives::{Problem, rank};
use commcost::sim::SimAlgorithm;
use commcost::{CommModel, Message};
use plotters::prelude::*;

use crate::collective::{CollectiveArg, FamilyArg, matches_series, spans, visit};
use crate::model::{self, Loaded};
use crate::units::{self, List};
use crate::{Failure, fail};

/// Points per doubling of the message size on a curve.
const POINTS_PER_OCTAVE: f64 = 8.0;
/// Stroke width of the model curves (the legend's samples are drawn 3 wide).
pub const CURVE_WIDTH: u32 = 2;

#[derive(Debug, clap::Args)]
pub struct PlotArgs {
    /// Model files (`FILE#NAME` for one model of a file of several); each is one curve (or,
    /// with --collective, the first model's algorithms).
    #[arg(long, value_name = "FILE")]
    model: Vec<PathBuf>,
    /// Presets (see `commcost presets`); each is one curve.
    #[arg(long, value_name = "NAME")]
    preset: Vec<String>,
    /// Plot a collective's algorithms instead of point-to-point times.
    #[arg(long, value_enum)]
    collective: Option<CollectiveArg>,
    /// The algorithm family plotted with --collective: Open MPI's tuned component (the
    /// default), the textbook algorithms, or MPICH's.
    #[arg(long, value_enum, default_value_t)]
    family: FamilyArg,
    /// Processes of the collective.
    #[arg(long, default_value_t = 64)]
    procs: u64,
    /// Message sizes: a doubling range `lo..hi` (suffixes K, M, G).
    #[arg(long, value_parser = units::parse_list, default_value = "1..4M", value_name = "RANGE")]
    bytes: List,
    /// Measurements to draw as points: OSU Micro-Benchmarks or Intel MPI Benchmarks output
    /// (its time series: latency, or with --collective the matching collective).
    #[arg(long, value_name = "FILE")]
    measured: Vec<PathBuf>,
    /// Output SVG file.
    #[arg(short, long, value_name = "FILE.svg")]
    output: PathBuf,
}

struct Curve {
    label: String,
    points: Vec<(f64, f64)>,
}

fn sizes(lo: u64, hi: u64) -> Vec<u64> {
    let ratio = 2f64.powf(1.0 / POINTS_PER_OCTAVE);
    let mut out = Vec::new();
    let mut x = lo.max(1) as f64;
    while x < hi as f64 && out.len() < 100_000 {
        out.push(x.round() as u64);
        x *= ratio;
    }
    out.push(hi);
    out.dedup();
    out
}

pub use commcost::calibrate::BenchmarkFormat as Format;

/// Reads benchmark output, OSU or IMB (as `format` demands), into its series
/// (`commcost::calibrate::read_benchmark_file`), with a hint when it is the other benchmark's.
pub fn read_benchmark(path: &Path, format: Format) -> Result<Vec<BenchmarkSeries>, Failure> {
    commcost::calibrate::read_benchmark_file(path, format).map_err(|e| {
        let hint = match (format, e.to_string().contains("this is")) {
            (Format::Osu, true) => " (use `commcost calibrate imb`)",
            (Format::Imb, true) => " (use `commcost calibrate osu`)",
            _ => "",
        };
        Failure(format!("{e}{hint}"))
    })
}

/// Reads benchmark output, OSU or IMB, into its series.
pub fn read_measured(path: &Path) -> Result<Vec<BenchmarkSeries>, Failure> {
    read_benchmark(path, Format::Any)
}

fn collective_curves<A: SimAlgorithm>(
    model: &dyn CommModel,
    procs: u64,
    grid: &[u64],
) -> Result<Vec<Curve>, Failure> {
    let mut curves: Vec<Curve> = Vec::new();
    for &s in grid {
        let ranking = rank::<A>(model, &Problem::new(procs, Message::contiguous(s)))?;
        for (a, cost) in ranking {
            let name = a.name().to_string();
            let point = (s as f64, cost * 1e6);
            match curves.iter_mut().find(|c| c.label == name) {
                Some(c) => c.points.push(point),
                None => curves.push(Curve {
                    label: name,
                    points: vec![point],
                }),
            }
        }
    }
    Ok(curves)
}

pub fn run(args: PlotArgs) -> Result<(), Failure> {
    let mut models: Vec<Loaded> = Vec::new();
    for path in &args.model {
        models.push(model::load_file(path)?);
    }
    for name in &args.preset {
        models.push(model::preset(name)?);
    }
    if models.is_empty() {
        return fail("give at least one --model FILE or --preset NAME");
    }
    let (lo, hi) = (args.bytes.0[0], *args.bytes.0.last().unwrap_or(&1));
    let grid = sizes(lo, hi);
    let mut curves = Vec::new();
    let mut switches: Vec<(f64, String)> = Vec::new();
    let title;
    match args.collective {
        None => {
            for m in &models {
                curves.push(Curve {
                    label: m.name.clone(),
                    points: grid
                        .iter()
                        .map(|&s| (s as f64, m.spec.p2p(&Message::contiguous(s)) * 1e6))
                        .collect(),
                });
                for b in m.spec.as_model().size_breakpoints() {
                    if (lo..=hi).contains(&b) {
                        switches.push((b as f64, format!("{} protocol switch", m.name)));
                    }
                }
            }
            title = "point-to-point time".to_string();
        }
        Some(CollectiveArg(c)) => {
            if args.procs == 0 {
                return fail("--procs must be at least 1");
            }
            let m = &models[0];
            let model: &dyn CommModel = &m.spec;
            let (procs, grid) = (args.procs, &grid[..]);
            let family = args.family.0;
            let (found, chosen) = visit!(family, c, |model: &'a dyn CommModel, procs: u64, grid: &'a [u64]| -> Result<(Vec<Curve>, Vec<crate::collective::Span>), Failure> {
                A => Ok((collective_curves::<A>(model, procs, grid)?, spans::<A>(model, &[procs], grid)?))
            })??;
            curves = found;
            for s in chosen.iter().skip(1) {
                switches.push((s.first as f64, format!("→ {}", s.algorithm)));
            }
            title = format!("{c} ({family}), P = {}, model {}", args.procs, m.name);
        }
    }
    let mut measured: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for path in &args.measured {
        for series in read_measured(path)? {
            let wanted = match (&series.kind, args.collective) {
                (SeriesKind::Latency, None) => true,
                (SeriesKind::Collective(name), Some(CollectiveArg(c))) => matches_series(c, name),
                _ => false,
            };
            if wanted {
                let pts: Vec<(f64, f64)> = series
                    .points
                    .iter()
                    .filter(|p| p.bytes >= lo.max(1) && p.bytes <= hi && p.value > 0.0)
                    .map(|p| (p.bytes as f64, p.value * 1e6))
                    .collect();
                if !pts.is_empty() {
                    measured.push((format!("measured: {}", series.title), pts));
                }
            }
        }
        if measured.is_empty() {
            return fail(format!(
                "{}: no {} series in the sizes plotted",
                path.display(),
                if args.collective.is_some() {
                    "matching collective"
                } else {
                    "latency"
                }
            ));
        }
    }
    // model / measured at every measured size (point-to-point plots)
    let mut residuals: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    if args.collective.is_none() {
        for m in &models {
            for (label, pts) in &measured {
                let ratios: Vec<(f64, f64)> = pts
                    .iter()
                    .map(|&(s, us)| (s, m.spec.p2p(&Message::contiguous(s as u64)) * 1e6 / us))
                    .filter(|(_, r)| r.is_finite() && *r > 0.0)
                    .collect();
                if !ratios.is_empty() {
                    let what = label.strip_prefix("measured: ").unwrap_or(label);
                    residuals.push((format!("{} / {what}", m.name), ratios));
                }
            }
        }
    }
    draw(
        &args.output,
        &title,
        &curves,
        &measured,
        &residuals,
        &switches,
        (lo, hi),
    )
    .map_err(|e| Failure(format!("{}: {e}", args.output.display())))?;
    outln!(
        "{}: {} curves, {} measured series, {} switch points",
        args.output.display(),
        curves.len(),
        measured.len(),
        switches.len()
    );
    Ok(())
}

/// An axis label for a size in bytes: `1`, `512`, `1 Ki`, `4 Mi`, `1.5 Ki`.
fn tick_bytes(x: f64) -> String {
    let b = x.round();
    for (scale, suffix) in [(1u64 << 30, "Gi"), (1 << 20, "Mi"), (1 << 10, "Ki")] {
        let v = b / scale as f64;
        if v >= 1.0 {
            return format!("{} {suffix}", trim(v));
        }
    }
    trim(b)
}

/// An axis label for a time in microseconds: `500 ns`, `1 µs`, `2.5 ms`.
fn tick_time(us: f64) -> String {
    let s = us * 1e-6;
    let a = s.abs();
    let (v, unit) = if a < 1e-6 {
        (s * 1e9, "ns")
    } else if a < 1e-3 {
        (s * 1e6, "µs")
    } else if a < 1.0 {
        (s * 1e3, "ms")
    } else {
        (s, "s")
    };
    format!("{} {unit}", trim(v))
}

/// A number with at most 3 significant digits and no trailing zeros.
fn trim(v: f64) -> String {
    let digits = if v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        2
    };
    let text = format!("{v:.digits$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

#[allow(clippy::too_many_arguments)]
fn draw(
    path: &PathBuf,
    title: &str,
    curves: &[Curve],
    measured: &[(String, Vec<(f64, f64)>)],
    residuals: &[(String, Vec<(f64, f64)>)],
    switches: &[(f64, String)],
    (lo, hi): (u64, u64),
) -> Result<(), Box<dyn std::error::Error>> {
    let values = curves
        .iter()
        .flat_map(|c| c.points.iter())
        .chain(measured.iter().flat_map(|m| m.1.iter()))
        .map(|p| p.1)
        .filter(|v| *v > 0.0 && v.is_finite());
    let (mut ymin, mut ymax) = (f64::INFINITY, 0.0f64);
    for v in values {
        ymin = ymin.min(v);
        ymax = ymax.max(v);
    }
    if !ymin.is_finite() {
        (ymin, ymax) = (1e-3, 1.0);
    }
    let (ymin, ymax) = (ymin / 1.5, ymax * 1.5);
    let (xmin, xmax) = (lo.max(1) as f64, (hi as f64).max(lo.max(1) as f64 * 2.0));
    let height = if residuals.is_empty() { 600 } else { 820 };
    let root = SVGBackend::new(path, (900, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let (upper, lower) = if residuals.is_empty() {
        (root.clone(), None)
    } else {
        let (u, l) = root.split_vertically(600);
        (u, Some(l))
    };
    let x_axis = || (xmin..xmax).log_scale().base(4.0);
    let mut chart = ChartBuilder::on(&upper)
        .caption(title, ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(x_axis(), (ymin..ymax).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("message size (bytes)")
        .y_desc("time")
        .x_label_formatter(&|x| tick_bytes(*x))
        .y_label_formatter(&|y| tick_time(*y))
        .draw()?;
    for (x, _) in switches {
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(*x, ymin), (*x, ymax)],
            BLACK.mix(0.4).stroke_width(1),
        )))?;
    }
    for (i, c) in curves.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(
                c.points.iter().copied(),
                color.stroke_width(CURVE_WIDTH),
            ))?
            .label(c.label.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(3))
            });
    }
    for (i, (label, pts)) in measured.iter().enumerate() {
        let color = Palette99::pick(curves.len() + i).to_rgba();
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))?
            .label(label.as_str())
            .legend(move |(x, y)| {
                Rectangle::new([(x + 5, y - 3), (x + 11, y + 3)], color.filled())
            });
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()?;
    if let Some(lower) = lower {
        // model / measured, on a linear axis around 1
        let spread = residuals
            .iter()
            .flat_map(|r| r.1.iter())
            .map(|&(_, r)| if r >= 1.0 { r } else { 1.0 / r })
            .fold(1.25f64, f64::max)
            .min(100.0)
            * 1.1;
        let mut panel = ChartBuilder::on(&lower)
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(x_axis(), 1.0 / spread..spread)?;
        panel
            .configure_mesh()
            .x_desc("message size (bytes)")
            .y_desc("model / measured")
            .x_label_formatter(&|x| tick_bytes(*x))
            .y_label_formatter(&|y| trim(*y))
            .draw()?;
        panel.draw_series(std::iter::once(PathElement::new(
            vec![(xmin, 1.0), (xmax, 1.0)],
            BLACK.stroke_width(1),
        )))?;
        for (x, _) in switches {
            panel.draw_series(std::iter::once(PathElement::new(
                vec![(*x, 1.0 / spread), (*x, spread)],
                BLACK.mix(0.4).stroke_width(1),
            )))?;
        }
        for (i, (label, pts)) in residuals.iter().enumerate() {
            let color = Palette99::pick(curves.len() + measured.len() + i).to_rgba();
            let clamped: Vec<(f64, f64)> = pts
                .iter()
                .map(|&(x, r)| (x, r.clamp(1.0 / spread, spread)))
                .collect();
            panel.draw_series(LineSeries::new(
                clamped.iter().copied(),
                color.stroke_width(1),
            ))?;
            panel
                .draw_series(clamped.iter().map(|&p| Circle::new(p, 3, color.filled())))?
                .label(label.as_str())
                .legend(move |(x, y)| {
                    Rectangle::new([(x + 5, y - 3), (x + 11, y + 3)], color.filled())
                });
        }
        panel
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperLeft)
            .draw()?;
    }
    root.present()?;
    Ok(())
}
