//! The Gantt chart of a simulation, drawn as SVG.

use super::*;

/// The first ranks the chart draws: at most [`MAX_SVG_RANKS`], and only as many as keep the
/// bars at most [`MAX_SVG_BARS`].
pub(super) fn drawn_ranks(schedule: &Schedule) -> u64 {
    let limit = schedule.ranks().min(MAX_SVG_RANKS);
    let mut per_rank = vec![0usize; limit as usize];
    for i in 0..schedule.len() {
        if let Some(r) = schedule.rank(OpId(i as u32))
            && r < limit
        {
            per_rank[r as usize] += 1;
        }
    }
    let mut total = 0usize;
    for (r, n) in per_rank.iter().enumerate() {
        total += n;
        if total > MAX_SVG_BARS {
            return r as u64;
        }
    }
    limit
}

/// Draws the Gantt chart; returns the number of ranks drawn.
pub(super) fn draw_gantt(
    path: &Path,
    result: &SimResult,
    schedule: &Schedule,
    title: &str,
) -> Result<u64, Failure> {
    let rows = drawn_ranks(schedule);
    if rows == 0 {
        return fail(format!(
            "--svg: rank 0 alone has more than {MAX_SVG_BARS} operations, more than the chart draws"
        ));
    }
    let shown = path.display();
    gantt(path, result, schedule, title, rows)
        .map_err(|e| Failure(format!("--svg {shown}: {e}")))?;
    Ok(rows)
}

/// Colours of the bars: sends, receives (from posting to completion), calcs.
pub(super) const SEND_COLOUR: RGBColor = RGBColor(31, 119, 180);

pub(super) const RECV_COLOUR: RGBColor = RGBColor(44, 160, 44);

pub(super) const CALC_COLOUR: RGBColor = RGBColor(255, 127, 14);

pub(super) fn gantt(
    path: &Path,
    result: &SimResult,
    schedule: &Schedule,
    title: &str,
    rows: u64,
) -> Result<(), Box<dyn std::error::Error>> {
    let (Some(starts), Some(ends)) = (&result.starts, &result.ends) else {
        return Err("the simulation kept no timeline".into());
    };
    let row_px = (4000 / rows).clamp(2, 24) as u32;
    let height = 170 + row_px * rows as u32;
    let xmax = if result.makespan > 0.0 {
        result.makespan * 1e6 * 1.02
    } else {
        1.0
    };
    let root = SVGBackend::new(path, (1000, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let (plot, legend) = root.split_vertically(height - 30);
    let caption = if rows < schedule.ranks() {
        format!("{title} (ranks 0..{} of {})", rows - 1, schedule.ranks())
    } else {
        title.to_string()
    };
    // rank r is the row centred on y = -r: rank 0 at the top
    let mut chart = ChartBuilder::on(&plot)
        .caption(caption, ("sans-serif", 16))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d(0.0..xmax, (0.5 - rows as f64)..0.5)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc("time (µs)")
        .y_desc("rank")
        .y_labels(rows.min(32) as usize)
        .y_label_formatter(&|y| {
            if y.fract() == 0.0 && *y <= 0.0 {
                format!("{}", (-y).round() as u64)
            } else {
                String::new()
            }
        })
        .draw()?;
    // per kind: the lane within the row (offsets from its centre) and the colour
    let lane = |kind: OpKind| match kind {
        OpKind::Send => (0.4, 0.1, SEND_COLOUR.to_rgba()),
        OpKind::Recv => (0.1, -0.2, RECV_COLOUR.mix(0.45)),
        OpKind::Calc => (-0.2, -0.4, CALC_COLOUR.to_rgba()),
    };
    for kind in [OpKind::Send, OpKind::Recv, OpKind::Calc] {
        let (top, bottom, colour) = lane(kind);
        chart.draw_series((0..schedule.len()).filter_map(|i| {
            let op = OpId(i as u32);
            let rank = schedule.rank(op)?;
            if rank >= rows || schedule.kind(op)? != kind {
                return None;
            }
            let y = -(rank as f64);
            Some(Rectangle::new(
                [(starts[i] * 1e6, y + top), (ends[i] * 1e6, y + bottom)],
                colour.filled(),
            ))
        }))?;
    }
    if let Some(critical) = &result.critical_path {
        let steps: Vec<_> = critical.steps.iter().filter(|s| s.rank < rows).collect();
        chart.draw_series(steps.iter().map(|s| {
            let y = -(s.rank as f64);
            Rectangle::new(
                [(s.start * 1e6, y + 0.45), (s.end * 1e6, y - 0.45)],
                CRITICAL_COLOUR.stroke_width(2),
            )
        }))?;
        chart.draw_series(std::iter::once(PathElement::new(
            steps
                .iter()
                .map(|s| (s.end * 1e6, -(s.rank as f64)))
                .collect::<Vec<_>>(),
            CRITICAL_COLOUR.mix(0.6).stroke_width(1),
        )))?;
    }
    // the legend, in its own strip below the chart
    let entries = [
        ("send", lane(OpKind::Send).2, false),
        ("receive (posted → done)", lane(OpKind::Recv).2, false),
        ("calc", lane(OpKind::Calc).2, false),
        ("critical path", CRITICAL_COLOUR.to_rgba(), true),
    ];
    let mut x = 70;
    for (label, colour, outline) in entries {
        let style = if outline {
            colour.stroke_width(2)
        } else {
            colour.filled()
        };
        legend.draw(&Rectangle::new([(x, 8), (x + 16, 20)], style))?;
        legend.draw(&Text::new(label, (x + 22, 8), ("sans-serif", 13)))?;
        x += 40 + 7 * label.chars().count() as i32;
    }
    root.present()?;
    Ok(())
}
