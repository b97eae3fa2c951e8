//! `select` and `table`: collective algorithms ranked and tabulated.

use commcost::collectives::{
    Collective, DecisionTable, Family, OmpiSetting, Problem, crossover, rank,
};
use commcost::sim::{
    CostSource, Hierarchical, SimAlgorithm, SimLimits, SimOptions, cost_hierarchical,
    rank_simulated_on,
};
use commcost::{CommModel, Message};
use indicatif::{ProgressBar, ProgressStyle};

use crate::model::Loaded;
use crate::units::{human_bytes, human_time};
use crate::{Failure, fail};

/// A collective on the command line: the library's [`Collective`], named as it prints
/// (`bcast`, `reduce-scatter`; MPI's `reduce_scatter` and `broadcast` are accepted too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CollectiveArg(pub Collective);

const COLLECTIVE_ARGS: [CollectiveArg; Collective::ALL.len()] = {
    let mut out = [CollectiveArg(Collective::Bcast); Collective::ALL.len()];
    let mut i = 0;
    while i < out.len() {
        out[i] = CollectiveArg(Collective::ALL[i]);
        i += 1;
    }
    out
};

impl clap::ValueEnum for CollectiveArg {
    fn value_variants<'a>() -> &'a [Self] {
        &COLLECTIVE_ARGS
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let c = self.0;
        // a collective no family prices (reduce_scatter_block) is accepted but not listed
        let value = clap::builder::PossibleValue::new(c.to_string())
            .alias(c.name())
            .hide(c.families().is_empty());
        Some(if c == Collective::Bcast {
            value.alias("broadcast")
        } else {
            value
        })
    }
}

/// An algorithm family on the command line: `textbook`, `ompi` or `mpich`
/// ([`Family::DEFAULT`] when not given).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FamilyArg(pub Family);

const FAMILY_ARGS: [FamilyArg; 3] = [
    FamilyArg(Family::ALL[0]),
    FamilyArg(Family::ALL[1]),
    FamilyArg(Family::ALL[2]),
];

impl clap::ValueEnum for FamilyArg {
    fn value_variants<'a>() -> &'a [Self] {
        &FAMILY_ARGS
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let help = match self.0 {
            Family::Textbook => "the textbook algorithms (Thakur, Rabenseifner & Gropp 2005)",
            Family::Ompi => "Open MPI 4.1's coll_tuned algorithms, with their rules-file IDs",
            Family::Mpich => "the textbook algorithms MPICH runs, under MPICH's names",
        };
        Some(clap::builder::PossibleValue::new(self.0.name()).help(help))
    }
}

impl Default for FamilyArg {
    fn default() -> Self {
        Self(Family::DEFAULT)
    }
}

impl std::fmt::Display for FamilyArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.name())
    }
}

/// Whether a benchmark's series name (OSU's `broadcast`, `all-to-all personalized exchange`;
/// IMB's `bcast`) is collective `c`.
pub fn matches_series(c: Collective, name: &str) -> bool {
    name.parse::<Collective>() == Ok(c)
        || (c == Collective::Alltoall && name.starts_with("all-to-all"))
}

/// [`Collective`]'s name with a capital first letter, for titles.
pub fn title(c: Collective) -> String {
    let name = c.to_string();
    name[..1].to_ascii_uppercase() + &name[1..]
}

/// Runs `$body` as a [`SimVisitor`] for the algorithm type `$A` of `($family, $collective)`:
/// the fields given are captured by value (references stay references).
macro_rules! visit {
    ($family:expr, $collective:expr, |$($field:ident : $ty:ty),*| -> $out:ty { $A:ident => $body:expr }) => {{
        struct Visit<'a> {
            $($field: $ty,)*
            _life: std::marker::PhantomData<&'a ()>,
        }
        impl<'a> commcost::sim::SimVisitor for Visit<'a> {
            type Output = $out;
            fn visit<$A: commcost::sim::SimAlgorithm>(self) -> $out {
                let Visit { $($field,)* .. } = self;
                $body
            }
        }
        commcost::sim::visit($family, $collective, Visit { $($field,)* _life: std::marker::PhantomData })
            .map_err(|e| $crate::Failure(format!("{e}; choose the family with --family")))
    }};
}
pub(crate) use visit;

fn ranked<A: SimAlgorithm>(
    model: &dyn CommModel,
    procs: u64,
    bytes: u64,
) -> Result<Vec<Row>, Failure> {
    let r = rank::<A>(model, &Problem::new(procs, Message::contiguous(bytes)))?;
    Ok(r.into_iter()
        .map(|(a, cost)| Row {
            algorithm: a.to_string(),
            cost,
            closed_form: cost,
            source: CostSource::ClosedForm,
            exact: true,
            ompi: a.ompi_rule(),
        })
        .collect())
}

/// One row of a decision table: sizes `first..=last` on `processes` use `algorithm`.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub processes: u64,
    pub first: u64,
    pub last: u64,
    pub algorithm: String,
}

/// The decision table as size ranges with exact switch points: the grid's best algorithms, and
/// between two grid sizes with different winners the crossover size where the ranking flips.
pub fn spans<A: SimAlgorithm>(
    model: &dyn CommModel,
    procs: &[u64],
    sizes: &[u64],
) -> Result<Vec<Span>, Failure> {
    if procs.contains(&0) {
        return fail("--procs: process counts must be at least 1");
    }
    let template = Problem::new(1, Message::contiguous(1));
    let table = DecisionTable::<A>::build(model, procs, sizes, &template)?;
    let mut out = Vec::new();
    for &p in table.processes() {
        let mut current = table.lookup(p, sizes[0]);
        let mut first = sizes[0];
        for w in sizes.windows(2) {
            let next = table.lookup(p, w[1]);
            if next != current {
                let problem = Problem::new(p, Message::contiguous(w[0]));
                let at = crossover(model, current, next, &problem, w[0]..=w[1])?.unwrap_or(w[1]);
                out.push(Span {
                    processes: p,
                    first,
                    last: at - 1,
                    algorithm: current.to_string(),
                });
                first = at;
                current = next;
            }
        }
        out.push(Span {
            processes: p,
            first,
            last: *sizes.last().unwrap_or(&first),
            algorithm: current.to_string(),
        });
    }
    Ok(out)
}

pub fn table(
    family: Family,
    c: Collective,
    loaded: &Loaded,
    procs: &[u64],
    sizes: &[u64],
    csv: bool,
) -> Result<(), Failure> {
    let model: &dyn CommModel = &loaded.spec;
    let rows = visit!(family, c, |model: &'a dyn CommModel, procs: &'a [u64], sizes: &'a [u64]| -> Result<Vec<Span>, Failure> {
        A => spans::<A>(model, procs, sizes)
    })??;
    if csv {
        outln!("processes,first_bytes,last_bytes,algorithm");
        for r in &rows {
            outln!("{},{},{},\"{}\"", r.processes, r.first, r.last, r.algorithm);
        }
    } else {
        print_spans(
            &format!(
                "{} decision table ({family}), model {}",
                title(c),
                loaded.name
            ),
            " (switch points exact)",
            sizes,
            rows.iter()
                .map(|r| (r.processes, r.first, r.last, r.algorithm.as_str(), "")),
        )?;
    }
    Ok(())
}

/// Prints a decision table as text: `{title}, sizes A..B{note}:`, then per process count its
/// spans `(P, first, last, algorithm, mark)`.
fn print_spans<'a>(
    title: &str,
    note: &str,
    sizes: &[u64],
    rows: impl Iterator<Item = (u64, u64, u64, &'a str, &'a str)>,
) -> Result<(), Failure> {
    let first = sizes.first().copied().unwrap_or(0);
    let last = sizes.last().copied().unwrap_or(first);
    outln!(
        "{title}, sizes {}..{}{note}:",
        human_bytes(first),
        human_bytes(last)
    );
    let mut last_p = None;
    for (processes, first, last, algorithm, mark) in rows {
        if last_p != Some(processes) {
            outln!("  P = {processes}");
            last_p = Some(processes);
        }
        outln!("    {first:>12} ..= {last:<12} {algorithm}{mark}");
    }
    Ok(())
}

/// One row of a simulated decision table: the sampled sizes `first..=last` on `processes` all
/// have `algorithm` as winner; `simulated` when any of those winners was priced by the
/// simulator (its closed form not exact there).
#[derive(Debug, Clone, PartialEq)]
pub struct SampledSpan {
    pub processes: u64,
    pub first: u64,
    pub last: u64,
    pub algorithm: String,
    pub simulated: bool,
}

/// The winner of [`rank_simulated_on`] for `procs` processes and `bytes` bytes, and whether it was
/// simulated. A candidate whose closed form is not exact here but whose schedule is beyond the
/// [`SimLimits`] (the library then falls back to the closed form) is an error naming `P` and
/// the size: a `--simulate` table does not silently rank by a bound.
fn simulated_winner<A: SimAlgorithm>(
    model: &dyn CommModel,
    procs: u64,
    bytes: u64,
    limits: SimLimits,
    options: &SimOptions,
    on: Option<&crate::nodes::Layout>,
) -> Result<(String, bool), Failure> {
    let at = || format!("P = {procs}, {bytes} bytes");
    let problem = Problem::new(procs, Message::contiguous(bytes));
    if let Some(layout) = on {
        // on nodes every candidate is simulated (no closed form prices a placement)
        let map = layout
            .layout
            .map_for_communicator(procs)
            .map_err(|e| Failure(format!("--procs {procs} on {}: {e}", layout.describe)))?;
        let platform = commcost::sim::TwoLevel {
            nodes: &map,
            inter: &layout.inter.spec,
            inter_rendezvous_above: layout.inter_rendezvous_above(),
        };
        let options = layout.options(*options);
        let ranking =
            commcost::sim::rank_on_nodes::<A>(model, platform, &problem, limits, &options)
                .map_err(|e| Failure(format!("{}: {e}", at())))?;
        return match ranking.first() {
            Some(best) => Ok((best.algorithm.to_string(), true)),
            None => fail(format!("{}: the collective has no algorithm here", at())),
        };
    }
    let ranking = rank_simulated_on::<A>(model, &problem, limits, options)
        .map_err(|e| Failure(format!("{}: {e}", at())))?;
    if let Some(refused) = ranking.iter().find(|e| {
        e.source == CostSource::ClosedForm && !e.algorithm.closed_form_exact(model, &problem)
    }) {
        let why = if procs > limits.max_processes {
            format!("more than {} processes", limits.max_processes)
        } else {
            format!(
                "a schedule of more than {} operations",
                limits.max_operations
            )
        };
        return fail(format!(
            "{}: `{}` cannot be simulated ({why}, the simulator's limit) and its closed form is \
             not exact there; use fewer processes or sizes, or `table` without --simulate",
            at(),
            refused.algorithm
        ));
    }
    match ranking.first() {
        Some(best) => Ok((
            best.algorithm.to_string(),
            best.source == CostSource::Simulated,
        )),
        None => fail(format!("{}: the collective has no algorithm here", at())),
    }
}

/// The decision table from [`rank_simulated_on`] at every `(P, size)` of the grid: consecutive
/// sampled sizes with the same winner merged into one span, so a switch point is only known to
/// lie between the last size of a span and the first of the next. Costs one schedule build and
/// simulation per algorithm whose closed form is not exact, per grid point; `bar` counts the
/// grid points.
pub fn sampled_spans<A: SimAlgorithm>(
    model: &dyn CommModel,
    procs: &[u64],
    sizes: &[u64],
    bar: &ProgressBar,
    options: &SimOptions,
    on: Option<&crate::nodes::Layout>,
) -> Result<Vec<SampledSpan>, Failure> {
    if procs.contains(&0) {
        return fail("--procs: process counts must be at least 1");
    }
    let limits = SimLimits::default();
    let mut out: Vec<SampledSpan> = Vec::new();
    for &p in procs {
        let mut current: Option<SampledSpan> = None;
        for &bytes in sizes {
            let (winner, simulated) = simulated_winner::<A>(model, p, bytes, limits, options, on)?;
            bar.inc(1);
            match current.as_mut() {
                Some(span) if span.algorithm == winner => {
                    span.last = bytes;
                    span.simulated |= simulated;
                }
                _ => {
                    out.extend(current.take());
                    current = Some(SampledSpan {
                        processes: p,
                        first: bytes,
                        last: bytes,
                        algorithm: winner,
                        simulated,
                    });
                }
            }
        }
        out.extend(current);
    }
    Ok(out)
}

/// `table --simulate`: the decision table ranked by [`rank_simulated_on`] at the sampled sizes.
#[allow(clippy::too_many_arguments)]
pub fn table_simulated(
    family: Family,
    c: Collective,
    loaded: &Loaded,
    procs: &[u64],
    sizes: &[u64],
    csv: bool,
    options: &SimOptions,
    on: Option<&crate::nodes::Layout>,
) -> Result<(), Failure> {
    let points = (procs.len() as u64).saturating_mul(sizes.len() as u64);
    // drawn on standard error, and only when that is a terminal
    let bar = ProgressBar::new(points);
    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} {elapsed}") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message("simulating");
    let model: &dyn CommModel = &loaded.spec;
    let bar = &bar;
    let rows = visit!(family, c, |model: &'a dyn CommModel, procs: &'a [u64], sizes: &'a [u64], bar: &'a ProgressBar, options: &'a SimOptions, on: Option<&'a crate::nodes::Layout>| -> Result<Vec<SampledSpan>, Failure> {
        A => sampled_spans::<A>(model, procs, sizes, bar, options, on)
    });
    bar.finish_and_clear();
    let rows = rows??;
    let source = |simulated: bool| {
        source_name(if simulated {
            CostSource::Simulated
        } else {
            CostSource::ClosedForm
        })
    };
    if csv {
        outln!("processes,first_bytes,last_bytes,algorithm,source");
        for r in &rows {
            outln!(
                "{},{},{},\"{}\",{}",
                r.processes,
                r.first,
                r.last,
                r.algorithm,
                source(r.simulated)
            );
        }
    } else {
        print_spans(
            &format!(
                "{} decision table ({family}), model {}",
                title(c),
                loaded.name
            ),
            &match on {
                Some(l) => format!(
                    ", simulated on nodes ({}), between nodes model {} (switch points between \
                     sampled sizes)",
                    l.describe, l.inter.name
                ),
                None => ", simulated where the closed form is not exact (switch points between \
                         sampled sizes)"
                    .to_string(),
            },
            sizes,
            rows.iter().map(|r| {
                let mark = if r.simulated { " (simulated)" } else { "" };
                (r.processes, r.first, r.last, r.algorithm.as_str(), mark)
            }),
        )?;
    }
    Ok(())
}

/// One entry of a ranking: the algorithm, its cost, its closed form, where the cost comes
/// from, whether the closed form is exact for this model and problem, and Open MPI's setting
/// of the algorithm in Open MPI's family.
struct Row {
    algorithm: String,
    cost: f64,
    closed_form: f64,
    source: CostSource,
    exact: bool,
    ompi: Option<OmpiSetting>,
}

fn ranked_simulated<A: SimAlgorithm>(
    model: &dyn CommModel,
    procs: u64,
    bytes: u64,
    options: SimOptions,
) -> Result<Vec<Row>, Failure> {
    let problem = Problem::new(procs, Message::contiguous(bytes));
    let r = rank_simulated_on::<A>(model, &problem, SimLimits::default(), &options)?;
    Ok(r.into_iter()
        .map(|e| Row {
            algorithm: e.algorithm.to_string(),
            cost: e.cost,
            closed_form: e.closed_form,
            source: e.source,
            exact: e.algorithm.closed_form_exact(model, &problem),
            ompi: e.algorithm.ompi_rule(),
        })
        .collect())
}

fn ranked_on_nodes<A: SimAlgorithm>(
    model: &dyn CommModel,
    nodes: &crate::nodes::Nodes,
    procs: u64,
    bytes: u64,
    options: SimOptions,
) -> Result<Vec<Row>, Failure> {
    let problem = Problem::new(procs, Message::contiguous(bytes));
    let options = nodes.options(options);
    let r = commcost::sim::rank_on_nodes::<A>(
        model,
        nodes.platform(),
        &problem,
        SimLimits::default(),
        &options,
    )?;
    Ok(r.into_iter()
        .map(|e| Row {
            algorithm: e.algorithm.to_string(),
            cost: e.cost,
            closed_form: e.closed_form,
            source: e.source,
            exact: false,
            ompi: e.algorithm.ompi_rule(),
        })
        .collect())
}

fn source_name(source: CostSource) -> &'static str {
    match source {
        CostSource::Simulated => "simulated",
        CostSource::ClosedForm => "closed form",
    }
}

/// `select`: every algorithm of the collective in `family` ranked by its closed form, or with
/// `simulate` (the platform's simulation options) by [`rank_simulated_on`] (each entry then
/// also shows its closed form and where the
/// cost comes from), or on `nodes` by simulation on the two-level platform. In Open MPI's
/// family every entry shows the rules-file fields that run it (ID, Open MPI's name, segment
/// size, fan-out).
#[allow(clippy::too_many_arguments)]
pub fn select(
    family: Family,
    c: Collective,
    loaded: &Loaded,
    procs: u64,
    bytes: u64,
    json: bool,
    simulate: Option<SimOptions>,
    nodes: Option<&crate::nodes::Nodes>,
) -> Result<(), Failure> {
    if procs == 0 {
        return fail("--procs must be at least 1");
    }
    let model: &dyn CommModel = &loaded.spec;
    let ranked: Vec<Row> = if let Some(nodes) = nodes {
        let options = simulate.unwrap_or_default();
        visit!(family, c, |model: &'a dyn CommModel, nodes: &'a crate::nodes::Nodes, procs: u64, bytes: u64, options: SimOptions| -> Result<Vec<Row>, Failure> {
            A => ranked_on_nodes::<A>(model, nodes, procs, bytes, options)
        })??
    } else if let Some(options) = simulate {
        visit!(family, c, |model: &'a dyn CommModel, procs: u64, bytes: u64, options: SimOptions| -> Result<Vec<Row>, Failure> {
            A => ranked_simulated::<A>(model, procs, bytes, options)
        })??
    } else {
        visit!(family, c, |model: &'a dyn CommModel, procs: u64, bytes: u64| -> Result<Vec<Row>, Failure> {
            A => ranked::<A>(model, procs, bytes)
        })??
    };
    // Open MPI's hierarchical compositions on the same platform (not in a rules file)
    let hierarchical: Vec<(Hierarchical, f64)> = match nodes {
        Some(n) if family == Family::Ompi => {
            let problem = Problem::new(procs, Message::contiguous(bytes));
            let options = n.options(simulate.unwrap_or_default());
            Hierarchical::ALL
                .into_iter()
                .filter(|h| h.collectives().contains(&c))
                .map(|h| {
                    let t = cost_hierarchical(
                        model,
                        n.platform(),
                        c,
                        h,
                        &problem,
                        SimLimits::default(),
                        &options,
                    );
                    t.map(|t| (h, t))
                })
                // a composition the layout cannot run (unequal nodes) is left out
                .filter_map(|r| match r {
                    Err(commcost::sim::SimError::InvalidOption { name: "nodes", .. }) => None,
                    r => Some(r),
                })
                .collect::<Result<_, _>>()?
        }
        _ => Vec::new(),
    };
    // (on nodes the closed form is the flat intra-node one: not shown beside the simulation)
    let simulate = simulate.filter(|_| nodes.is_none());
    let best = ranked.first().map_or(0.0, |r| r.cost);
    let ratio = |cost: f64| if best > 0.0 { cost / best } else { 1.0 };
    if json {
        let rows: Vec<serde_json::Value> = ranked
            .iter()
            .map(|r| {
                let mut row = serde_json::json!({
                    "algorithm": r.algorithm, "seconds": r.cost, "ratio_to_best": ratio(r.cost),
                });
                if let Some(o) = r.ompi {
                    row["ompi"] = serde_json::json!({
                        "id": o.id, "name": o.name, "segsize": o.segment, "faninout": o.fanout,
                    });
                }
                if simulate.is_some() {
                    row["closed_form_seconds"] = serde_json::json!(r.closed_form);
                    row["source"] = serde_json::json!(source_name(r.source));
                    row["closed_form_exact"] = serde_json::json!(r.exact);
                }
                row
            })
            .collect();
        let mut out = serde_json::json!({
            "model": loaded.name, "family": family.name(), "collective": c.to_string(),
            "processes": procs, "bytes": bytes, "ranking": rows,
        });
        if family == Family::Ompi {
            out["ompi_coll_id"] = serde_json::json!(c.ompi_id());
            out["ompi_rules_bytes"] = serde_json::json!(c.ompi_rules_size(bytes, procs));
        }
        if simulate.is_some() {
            out["simulated"] = serde_json::json!(true);
        }
        if let Some(n) = nodes {
            out["nodes"] = serde_json::json!({
                "nodes": n.map.nodes(), "layout": n.layout, "inter_model": n.inter.name,
            });
        }
        if !hierarchical.is_empty() {
            out["hierarchical"] = hierarchical
                .iter()
                .map(|(h, t)| {
                    serde_json::json!({
                        "composition": h.to_string(), "seconds": t, "ratio_to_best": ratio(*t),
                    })
                })
                .collect();
        }
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    let on_nodes = nodes.map(|n| format!(" on {}, simulated", n.describe()));
    let how = match &on_nodes {
        Some(text) => text.as_str(),
        None if simulate.is_some() => " (simulated where the closed form is not exact)",
        None => "",
    };
    outln!(
        "{} of {} bytes on {procs} processes ({family}), model {}{how}:",
        title(c),
        bytes,
        loaded.name
    );
    let ompi = family == Family::Ompi;
    if ompi {
        outln!(
            "  Open MPI: collective ID {} ({}), rules-file message size {}; a rule is \
             `msg_size ID faninout segsize`",
            c.ompi_id(),
            c.name(),
            c.ompi_rules_size(bytes, procs)
        );
    }
    let mut header = format!(
        "  {:<4} {:<36} {:>14} {:>8}",
        "rank", "algorithm", "time", "× best"
    );
    if simulate.is_some() {
        header += &format!(" {:>14}  {:<11}", "closed form", "source");
    }
    if ompi {
        header += &format!(
            "  {:>2} {:<22} {:>7} {:>7}",
            "ID", "Open MPI name", "fanout", "segsize"
        );
    }
    outln!("{}", header.trim_end());
    for (i, r) in ranked.iter().enumerate() {
        let mut line = format!(
            "  {:<4} {:<36} {:>14} {:>8.3}",
            i + 1,
            r.algorithm,
            human_time(r.cost),
            ratio(r.cost)
        );
        if simulate.is_some() {
            line += &format!(
                " {:>14}  {:<11}",
                human_time(r.closed_form),
                source_name(r.source)
            );
        }
        if let Some(o) = r.ompi {
            line += &format!(
                "  {:>2} {:<22} {:>7} {:>7}",
                o.id, o.name, o.fanout, o.segment
            );
        }
        outln!("{}", line.trim_end());
    }
    if !hierarchical.is_empty() {
        outln!(
            "  hierarchical compositions (Open MPI runs han with `--mca coll_han_priority 100`; \
             a rules file cannot ask for either):"
        );
        for (h, t) in &hierarchical {
            outln!(
                "       {:<36} {:>14} {:>8.3}",
                h.to_string(),
                human_time(*t),
                ratio(*t)
            );
        }
    }
    // a closed form that is only a bound here, kept because the schedule is beyond the
    // simulator's limits: say so rather than rank by it silently
    let limits = SimLimits::default();
    for r in &ranked {
        if simulate.is_some() && r.source == CostSource::ClosedForm && !r.exact {
            outln!(
                "note: `{}` is ranked by its closed form, only an upper bound here: its \
                 schedule is beyond the simulator's limits ({} processes, {} operations)",
                r.algorithm,
                limits.max_processes,
                limits.max_operations
            );
        }
    }
    Ok(())
}
