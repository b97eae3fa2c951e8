//! Writing GOAL: [`write_goal`], [`write_goal_to`].

use crate::sim::op::{OpId, OpKind};
use crate::sim::schedule::Schedule;

/// Writes a schedule as GOAL, in Schedgen's style: labels `l1, l2, …` per rank, one statement
/// per line, sizes of contiguous bytes, calc times rounded to whole units of `seconds_per_unit`
/// seconds. LogGOPSim's `txt2bin` reads the text ([`write_goal_to`] writes it to a file or
/// any other writer without holding it in memory).
///
/// # Errors
///
/// As [`write_goal_to`]: a calc of more than 2^64 - 1 units (`InvalidInput`, naming the
/// operation), which a GOAL reader could not read back.
///
/// # Examples
///
/// ```
/// use commcost::collectives::{Bcast, Problem};
/// use commcost::sim::{ToSchedule, parse_goal, write_goal};
/// use commcost::Message;
///
/// let s = Bcast::Binomial.schedule(&Problem::new(4, Message::contiguous(8)))?;
/// let text = write_goal(&s, 1e-9)?;
/// assert!(text.starts_with("num_ranks 4\n"));
/// assert_eq!(parse_goal(&text, 1e-9)?.len(), s.len());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_goal(schedule: &Schedule, seconds_per_unit: f64) -> std::io::Result<String> {
    let mut out = Vec::new();
    write_goal_to(schedule, seconds_per_unit, &mut out)?;
    String::from_utf8(out).map_err(std::io::Error::other)
}

/// [`write_goal`] to a writer (buffered here: pass the file itself), statement by statement;
/// besides the writer's buffer it holds two `u32` per operation (the operations in rank
/// order and their labels).
///
/// # Errors
///
/// The writer's; `InvalidInput` naming the operation for a calc of more than 2^64 - 1 units
/// of `seconds_per_unit` (nothing after the statements before it is written).
///
/// # Examples
///
/// ```
/// use commcost::sim::{SchedgenPattern, write_goal, write_goal_to};
///
/// let s = SchedgenPattern::Dissemination.schedule(8, 1)?;
/// let mut out = Vec::new();
/// write_goal_to(&s, 1e-9, &mut out)?;
/// assert_eq!(String::from_utf8(out)?, write_goal(&s, 1e-9)?);
/// // 1 ms in units of 1e-300 s does not fit a GOAL calc
/// let calc = commcost::sim::parse_goal("num_ranks 1\nrank 0 {\nl1: calc 1000000\n}\n", 1e-9)?;
/// assert!(write_goal(&calc, 1e-300).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_goal_to<W: std::io::Write>(
    schedule: &Schedule,
    seconds_per_unit: f64,
    out: W,
) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
    let n = schedule.len();
    let ranks = schedule.ranks() as usize;
    let rank_of = |i: usize| schedule.rank(OpId(i as u32)).unwrap_or(0) as usize;
    // the operations in rank order (a counting sort), and each one's label within its rank
    let mut start = vec![0u32; ranks + 1];
    for i in 0..n {
        start[rank_of(i) + 1] += 1;
    }
    for r in 0..ranks {
        start[r + 1] += start[r];
    }
    let mut order = vec![0u32; n];
    let mut label = vec![0u32; n];
    {
        let mut next = start.clone();
        for (i, l) in label.iter_mut().enumerate() {
            let r = rank_of(i);
            let at = next[r] as usize;
            order[at] = i as u32;
            *l = next[r] - start[r] + 1;
            next[r] += 1;
        }
    }
    writeln!(out, "num_ranks {}", schedule.ranks())?;
    for r in 0..ranks {
        writeln!(out, "\nrank {r} {{")?;
        let ops = &order[start[r] as usize..start[r + 1] as usize];
        for &i in ops {
            let op = OpId(i);
            let l = label[i as usize];
            match schedule.kind(op) {
                Some(kind @ (OpKind::Send | OpKind::Recv)) => {
                    let send = kind == OpKind::Send;
                    writeln!(
                        out,
                        "l{l}: {} {}b {} {} tag {}",
                        if send { "send" } else { "recv" },
                        schedule.message(op).map_or(0, |m| m.bytes()),
                        if send { "to" } else { "from" },
                        schedule.peer(op).unwrap_or(0),
                        schedule.tag(op).unwrap_or(0)
                    )?;
                }
                _ => {
                    let seconds = schedule.calc_seconds(op).unwrap_or(0.0);
                    let units = if seconds_per_unit > 0.0 {
                        (seconds / seconds_per_unit).round()
                    } else {
                        0.0
                    };
                    // u64::MAX as f64 is 2^64, the first value that does not fit (NaN: a
                    // unit of NaN seconds, which does not either)
                    if units.is_nan() || units >= u64::MAX as f64 {
                        return Err(std::io::Error::new(
                            std::io::ErrorKind::InvalidInput,
                            format!(
                                "operation {}: a calc of {seconds:e} s is {units:e} units of \
                                 {seconds_per_unit:e} s, more than a GOAL calc holds (2^64 - 1)",
                                op.0
                            ),
                        ));
                    }
                    writeln!(out, "l{l}: calc {}", units as u64)?;
                }
            }
        }
        for &i in ops {
            for (d, kind) in schedule.dependents(OpId(i)) {
                let word = match kind {
                    crate::sim::Dependency::Requires => "requires",
                    crate::sim::Dependency::Irequires => "irequires",
                };
                writeln!(out, "l{} {word} l{}", label[d.index()], label[i as usize])?;
            }
        }
        writeln!(out, "}}")?;
    }
    out.flush()
}
