//! What `simulate` runs: a collective algorithm's schedule (with its closed form) or a GOAL
//! file; the parsers of the options that shape it.

use super::*;

/// A collective's schedule with its closed form.
pub(crate) struct Built {
    pub(crate) algorithm: String,
    pub(crate) schedule: Schedule,
    /// The closed form and whether it is exact (when a model was given).
    pub(crate) closed: Option<(f64, bool)>,
}

/// Parses and builds the algorithm `name` of collective `A`, priced on `model` if one is
/// given.
fn build<A: SimAlgorithm>(
    name: &str,
    model: Option<&dyn CommModel>,
    problem: &Problem,
    max_memory: u64,
) -> Result<Built, Failure> {
    let algorithm: A = name
        .parse()
        .map_err(|e: AlgorithmParseError| Failure(format!("--algorithm: {e}")))?;
    let closed = match model {
        Some(model) => Some((
            algorithm.cost(model, problem)?,
            algorithm.closed_form_exact(model, problem),
        )),
        None => None,
    };
    let schedule = algorithm
        .schedule_within(problem, max_memory)
        .map_err(|e| {
            Failure(format!(
                "{algorithm} on {} processes: {e}",
                problem.processes
            ))
        })?;
    Ok(Built {
        algorithm: algorithm.to_string(),
        schedule,
        closed,
    })
}

/// The schedule of collective `name`'s algorithm `algorithm` in `family`, and the collective;
/// priced on `model` if one is given.
pub(crate) fn build_collective(
    family: Family,
    name: &str,
    algorithm: &str,
    model: Option<&dyn CommModel>,
    problem: &Problem,
    max_memory: u64,
) -> Result<(Collective, Built), Failure> {
    let c: Collective = name
        .parse()
        .map_err(|e| Failure(format!("collective: {e}")))?;
    let built = crate::collective::visit!(family, c, |algorithm: &'a str, model: Option<&'a dyn CommModel>, problem: &'a Problem, max_memory: u64| -> Result<Built, Failure> {
        A => build::<A>(algorithm, model, problem, max_memory)
    })??;
    Ok((c, built))
}

/// `SEED:MEAN`, e.g. `42:1us`.
pub fn parse_noise(text: &str) -> Result<Noise, Failure> {
    let Some((seed, mean)) = text.split_once(':') else {
        return fail(format!(
            "--noise `{}`: expected SEED:MEAN, e.g. 42:1us",
            units::shown(text)
        ));
    };
    let seed: u64 = seed.trim().parse().map_err(|_| {
        Failure(format!(
            "--noise `{}`: the random seed `{}` is not a whole number",
            units::shown(text),
            units::shown(seed)
        ))
    })?;
    let mean = units::parse_seconds(mean).map_err(|e| Failure(format!("--noise: {e}")))?;
    Noise::exponential(seed, mean).map_err(|e| Failure(format!("--noise: {e}")))
}

/// `PER_CALL,PER_BYTE`, e.g. `1us,0.5ns`.
pub fn parse_operator(text: &str) -> Result<Operator, Failure> {
    let Some((call, byte)) = text.split_once(',') else {
        return fail(format!(
            "--operator `{}`: expected PER_CALL,PER_BYTE, e.g. 1us,0.5ns",
            units::shown(text)
        ));
    };
    let call = units::parse_seconds(call).map_err(|e| Failure(format!("--operator: {e}")))?;
    let byte = units::parse_seconds(byte).map_err(|e| Failure(format!("--operator: {e}")))?;
    Operator::new(call, byte).map_err(|e| Failure(format!("--operator: {e}")))
}

/// Reads and parses a GOAL file ([`read_goal_file`](commcost::sim::read_goal_file): at most
/// [`MAX_GOAL_FILE_BYTES`](commcost::limits::MAX_GOAL_FILE_BYTES), a large one streamed).
pub(super) fn read_goal(path: &Path, unit: f64, max_memory: u64) -> Result<Schedule, Failure> {
    commcost::sim::read_goal_file(path, unit, max_memory).map_err(|e| match e {
        // the file's errors name it
        GoalError::File(e) => Failure(e.to_string()),
        e => Failure(format!("{}: {e}", path.display())),
    })
}

/// Writes `schedule` as GOAL to `path` (`flag` names the option in errors).
pub(crate) fn write_goal_file(
    path: &Path,
    flag: &str,
    schedule: &Schedule,
    unit: f64,
) -> Result<(), Failure> {
    let shown = path.display();
    let file = std::fs::File::create(path)
        .map_err(|e| Failure(format!("{flag} {shown}: cannot write: {e}")))?;
    commcost::sim::write_goal_to(schedule, unit, file).map_err(|e| {
        // no half-written schedule is left behind
        let _ = std::fs::remove_file(path);
        Failure(format!("{flag} {shown}: cannot write: {e}"))
    })
}
