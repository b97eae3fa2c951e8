//! `goal`: a schedule written as LogGOPSim's GOAL text: one of Schedgen's patterns by its name
//! (`commcost::sim::SchedgenPattern`), or any collective algorithm the crate builds.

use std::path::PathBuf;

use commcost::Message;
use commcost::collectives::Problem;
use commcost::sim::{SchedgenPattern, Schedule};

use crate::simulate::{build_collective, parse_operator, write_goal_file};
use crate::units;
use crate::{Failure, fail};

#[derive(Debug, clap::Args)]
pub struct GoalArgs {
    /// A Schedgen pattern (binomialtreebcast, dissemination, allreduce_ring,
    /// allreduce_recdoub: the operations Schedgen writes for `-p NAME -s PROCS -d BYTES`), or
    /// with --algorithm a collective (as `simulate` takes it).
    pattern: String,
    /// The collective's algorithm, by its name in the family (`binomial`, `ring`).
    #[arg(long, value_name = "NAME")]
    algorithm: Option<String>,
    /// The algorithm family (with --algorithm): Open MPI's tuned component (the default), the
    /// textbook algorithms, or MPICH's [default: ompi].
    #[arg(long, value_enum)]
    family: Option<crate::collective::FamilyArg>,
    /// Number of processes.
    #[arg(long, value_parser = units::parse_procs)]
    procs: u64,
    /// Bytes: per basic step of a Schedgen pattern (its `-d`), as MPI counts them for a
    /// collective (suffixes K, M, G).
    #[arg(long, value_parser = units::parse_bytes)]
    bytes: u64,
    /// The reduction operator's cost of a collective: PER_CALL,PER_BYTE (`1us,0.5ns`).
    #[arg(long, allow_hyphen_values = true, value_name = "PER_CALL,PER_BYTE")]
    operator: Option<String>,
    /// The time unit of the written `calc` durations [default: 1ns].
    #[arg(long, allow_hyphen_values = true, value_name = "TIME")]
    goal_unit: Option<String>,
    /// The file to write [default: standard output].
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// The memory the schedule may use (suffixes K, M, G, T) [default: 2G].
    #[arg(long, value_parser = units::parse_bytes, value_name = "BYTES")]
    max_memory: Option<u64>,
}

pub fn run(args: GoalArgs) -> Result<(), Failure> {
    let max_memory = args.max_memory.unwrap_or(commcost::sim::DEFAULT_MAX_MEMORY);
    if max_memory == 0 {
        return fail("--max-memory must be above 0 bytes");
    }
    if args.procs == 0 {
        return fail("--procs must be at least 1");
    }
    let unit = units::parse_seconds(args.goal_unit.as_deref().unwrap_or("1ns"))
        .map_err(|e| Failure(format!("--goal-unit: {e}")))?;
    if unit <= 0.0 {
        return fail("--goal-unit must be above 0");
    }
    let schedule: Schedule = match &args.algorithm {
        None => {
            for (given, flag) in [
                (args.operator.is_some(), "--operator"),
                (args.family.is_some(), "--family"),
            ] {
                if given {
                    return fail(format!(
                        "{flag} describes a collective's algorithm; give it with --algorithm"
                    ));
                }
            }
            let pattern: SchedgenPattern = args.pattern.parse().map_err(|e| {
                Failure(format!(
                    "{e}; or give a collective with --algorithm (see `commcost simulate --help`)"
                ))
            })?;
            pattern
                .schedule_within(args.procs, args.bytes, max_memory)
                .map_err(|e| Failure(format!("{pattern} on {} processes: {e}", args.procs)))?
        }
        Some(algorithm) => {
            let mut problem = Problem::new(args.procs, Message::contiguous(args.bytes));
            if let Some(op) = &args.operator {
                problem = problem.with_operator(parse_operator(op)?);
            }
            build_collective(
                args.family.unwrap_or_default().0,
                &args.pattern,
                algorithm,
                None,
                &problem,
                max_memory,
            )?
            .1
            .schedule
        }
    };
    match &args.output {
        Some(path) => write_goal_file(path, "--output", &schedule, unit),
        None => {
            let stdout = std::io::stdout();
            commcost::sim::write_goal_to(&schedule, unit, stdout.lock())
                .map_err(Failure::from_output)
        }
    }
}
