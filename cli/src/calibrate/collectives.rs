//! `calibrate collectives`: per-call costs of Open MPI's algorithms from forced runs, fitted at
//! small sizes on 2 ranks, checked on the runs held out, written into a model file.

use std::path::PathBuf;

use commcost::calibrate::{
    CallCostErrors, CallCostPlan, ForcedStat, check_call_costs, fit_call_costs, parse_forced_runs,
};
use serde_json::{Map, Value, json};

use crate::model::{
    LocalSection, ModelFile, Provenance, host_name, load_file, now_utc, write_file,
};
use crate::units::{human_bytes, human_time};
use crate::{Failure, fail};

/// What `calibrate collectives` was asked.
pub(super) struct CollectivesArgs {
    pub model: PathBuf,
    pub runs: Option<PathBuf>,
    pub check: Option<PathBuf>,
    /// Measure the runs first (and write them to `runs` if given).
    pub measure: Option<super::collectives_measure::MeasureOptions>,
    pub stat: ForcedStat,
    pub plan: CallCostPlan,
    pub output: Option<PathBuf>,
}

fn errors_json(e: &CallCostErrors) -> Value {
    json!({
        "runs": e.runs,
        "median_relative_error_without_call_costs": e.median_without,
        "median_relative_error": e.median_with,
        "cells": e.cells,
        "picks_within_10pct_of_fastest_without_call_costs": e.picks_within_10pct_without,
        "picks_within_10pct_of_fastest": e.picks_within_10pct_with,
    })
}

fn errors_line(what: &str, e: &CallCostErrors) -> String {
    format!(
        "  {what}: {} runs, median error {:.0} % -> {:.0} %; picks within 10 % of the fastest {} -> {} of {} cells",
        e.runs,
        e.median_without * 100.0,
        e.median_with * 100.0,
        e.picks_within_10pct_without,
        e.picks_within_10pct_with,
        e.cells
    )
}

/// Measures (with `--measure`), fits, reports and writes.
pub(super) fn collectives(args: CollectivesArgs) -> Result<(), Failure> {
    let loaded = load_file(&args.model)?;
    // where the result goes, settled before anything is measured
    let model_path = args.model.to_string_lossy().to_string();
    let plain_path = PathBuf::from(model_path.split('#').next().unwrap_or(&model_path));
    let existing = ModelFile::read(&plain_path).ok();
    let output = match (&args.output, &existing) {
        (Some(o), _) => o.clone(),
        (None, Some(_)) if !model_path.contains('#') => plain_path.clone(),
        _ => {
            return fail(format!(
                "{model_path} is not a single commcost model file: give -o FILE to write one"
            ));
        }
    };
    let (text, source) = match (&args.measure, &args.runs) {
        (Some(opts), _) => {
            let text = super::collectives_measure::measure(opts)?;
            if let Some(path) = &args.runs {
                std::fs::write(path, &text).map_err(|e| {
                    Failure(format!("{}: cannot write the runs: {e}", path.display()))
                })?;
            }
            (text, format!("measured by `{}`", opts.mpirun))
        }
        (None, Some(path)) => (
            commcost::limits::read_text_file(
                path,
                "forced-run file",
                commcost::limits::MAX_MODEL_FILE_BYTES,
            )?,
            path.display().to_string(),
        ),
        (None, None) => {
            return fail("give a forced-run CSV file (RUNS) or --measure");
        }
    };
    let runs =
        parse_forced_runs(&text, args.stat).map_err(|e| Failure(format!("{source}: {e}")))?;
    let fit = fit_call_costs(
        &runs,
        loaded.spec.as_model(),
        loaded.operator,
        loaded.local,
        &args.plan,
    )
    .map_err(|e| Failure(format!("{source}: {e}")))?;

    // the fitted costs on runs measured separately
    let checked = match &args.check {
        Some(path) => {
            let text = commcost::limits::read_text_file(
                path,
                "forced-run file",
                commcost::limits::MAX_MODEL_FILE_BYTES,
            )?;
            let other = parse_forced_runs(&text, args.stat)
                .map_err(|e| Failure(format!("{}: {e}", path.display())))?;
            check_call_costs(
                &other,
                loaded.spec.as_model(),
                loaded.operator,
                loaded.local.with_calls(fit.calls),
            )
            .map_err(|e| Failure(format!("{}: {e}", path.display())))?
            .map(|c| (path.display().to_string(), c))
        }
        None => None,
    };

    let mut file = existing.unwrap_or_else(|| ModelFile {
        commcost_model_file: 1,
        provenance: Provenance {
            measured: format!("the model {model_path}"),
            method: "loaded unchanged".into(),
            date: now_utc(),
            host: host_name(),
            inputs: vec![model_path.clone()],
            tool: format!("commcost {}", env!("CARGO_PKG_VERSION")),
            ..Provenance::default()
        },
        spec: loaded.spec.clone(),
        local: None,
        platform: (!loaded.platform.is_plain()).then_some(loaded.platform),
        nodes: loaded.nodes.clone(),
    });

    let mut accuracy = Map::new();
    if let Some(e) = &fit.fit {
        accuracy.insert("fitted_runs".into(), errors_json(e));
    }
    if let Some(e) = &fit.held_out {
        accuracy.insert("held_out_runs".into(), errors_json(e));
    }
    if let Some((path, check)) = &checked {
        let (overall, by) = (&check.overall, &check.by_processes);
        let mut m = Map::new();
        m.insert("file".into(), path.clone().into());
        m.insert("all".into(), errors_json(overall));
        for (p, e) in by {
            m.insert(format!("{p}_processes"), errors_json(e));
        }
        accuracy.insert("separate_runs".into(), Value::Object(m));
    }
    let mut parameters = Map::new();
    parameters.insert(
        "calls".into(),
        "seconds one call of an Open MPI algorithm spends besides its messages, copies and operator; added to the algorithm's price".into(),
    );
    let clamped: Vec<String> = fit
        .fitted
        .iter()
        .filter(|f| f.clamped)
        .map(|f| {
            format!(
                "{} {} ({}): the model prices it above the measurements at the fitted sizes; call cost 0",
                f.collective, f.algorithm, f.name
            )
        })
        .collect();
    let calls_provenance = Provenance {
        measured: format!(
            "{} forced runs of Open MPI algorithms ({}; {} column){}",
            runs.len(),
            source,
            args.stat.column(),
            if fit.skipped > 0 {
                format!(", {} of them not priceable and skipped", fit.skipped)
            } else {
                String::new()
            }
        ),
        method: format!(
            "per algorithm the median of measured minus priced time over its runs on {} processes of at most {} (commcost::calibrate::fit_call_costs); every other run held out",
            args.plan.fit_processes,
            human_bytes(args.plan.fit_max_bytes)
        ),
        date: now_utc(),
        host: host_name(),
        inputs: args.runs.iter().map(|p| p.display().to_string()).collect(),
        parameters,
        accuracy,
        adjustments: clamped,
        tool: format!("commcost {}", env!("CARGO_PKG_VERSION")),
    };
    let section = match file.local.take() {
        Some(mut s) => {
            s.work = s.work.with_calls(fit.calls);
            s.calls_provenance = Some(calls_provenance);
            s
        }
        None => LocalSection {
            work: commcost::collectives::LocalWork::FREE.with_calls(fit.calls),
            operator: commcost::collectives::Operator::FREE,
            provenance: Provenance {
                measured: "nothing: copies, buffers and the operator are free (run `commcost calibrate local` to measure them)".into(),
                method: "none".into(),
                date: now_utc(),
                host: host_name(),
                tool: format!("commcost {}", env!("CARGO_PKG_VERSION")),
                ..Provenance::default()
            },
            calls_provenance: Some(calls_provenance),
        },
    };
    file.local = Some(section);
    write_file(&output, &file)?;

    outln!(
        "wrote {} (call costs of {} algorithm{})",
        output.display(),
        fit.fitted.len(),
        if fit.fitted.len() == 1 { "" } else { "s" }
    );
    for f in &fit.fitted {
        outln!(
            "  {:<15} {:>2} {:<28} {:>10}  ({} runs{})",
            f.collective.name(),
            f.algorithm,
            f.name,
            human_time(f.seconds),
            f.runs,
            if f.clamped { ", clamped to 0" } else { "" }
        );
    }
    if let Some(e) = &fit.fit {
        outln!("{}", errors_line("fitted runs", e));
    }
    match &fit.held_out {
        Some(e) => outln!("{}", errors_line("held-out runs", e)),
        None => outln!("  held-out runs: none (every run was in the fit set)"),
    }
    for (p, e) in &fit.held_out_by_processes {
        outln!("{}", errors_line(&format!("held out, {p} processes"), e));
    }
    for (c, e) in &fit.held_out_by_collective {
        outln!("{}", errors_line(c.name(), e));
    }
    if let Some((path, check)) = &checked {
        let (overall, by) = (&check.overall, &check.by_processes);
        outln!("{}", errors_line(&format!("separate runs {path}"), overall));
        for (p, e) in by {
            outln!(
                "{}",
                errors_line(&format!("separate runs, {p} processes"), e)
            );
        }
    }
    Ok(())
}
