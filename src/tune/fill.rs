//! Rules between the measured sizes: [`TuneReport::rules_filled`].

use super::measure::{TuneReport, Verdict};
use super::plan::priced;
use super::{TuneConfig, TuneError};
use crate::CommModel;
use crate::Message;
use crate::collectives::Problem;
use crate::collectives::ompi::fixed_decision;
use crate::export::{OmpiBlock, OmpiCollectiveRules, OmpiRule, OmpiRules};

/// Most sizes tried between two neighbouring measured sizes (the powers of two between them,
/// thinned to this many).
const MAX_FILL_POINTS: usize = 64;

/// What runs at one measured size: the switched-to algorithm (its name and rules entry) or the
/// default, with the measured / predicted ratio that corrects the model's price there.
#[derive(Debug, Clone)]
struct Decided {
    bytes: u64,
    rule: OmpiRule,
    /// `None`: Open MPI's default (its fixed decision's algorithm is priced at each size).
    name: Option<String>,
    correction: f64,
}

impl TuneReport {
    /// The rules file of [`rules`](Self::rules) with each switch between two neighbouring
    /// measured sizes placed where the model, corrected by what was measured, moves from one
    /// decision to the other.
    ///
    /// Between measured sizes `s_i < s_(i+1)` whose decisions differ (`A` at `s_i`, `B` at
    /// `s_(i+1)`; either may be Open MPI's default, priced as the algorithm its fixed decision
    /// runs at each size), each decision's price is multiplied by its own measured / predicted
    /// ratio at its measured size: `T_A(x) = k_A price_A(x)`, `k_A = measured_A(s_i) /
    /// predicted_A(s_i)`, and `T_B` likewise at `s_(i+1)`. The rule for `B` starts at the
    /// smallest power of two `x` in `(s_i, s_(i+1))` with `T_B(x) <= T_A(x)`, else at
    /// `s_(i+1)`. Where a decision's ratio is unknown (a cell with no measured time) the
    /// boundary stays at `s_(i+1)`, as in [`rules`](Self::rules).
    ///
    /// # Errors
    ///
    /// [`TuneError::Model`] if `model` cannot price an algorithm it priced when planning;
    /// [`TuneError::Rules`] for a tuning of MPICH.
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::collectives::Collective;
    /// use commcost::presets;
    /// use commcost::tune::{Run, Runner, TuneConfig, plan_tuning, tune};
    ///
    /// // every forced algorithm takes its price, the default twice the price of what it runs
    /// struct Machine;
    /// impl Runner for Machine {
    ///     fn time(&mut self, run: &Run) -> Result<Vec<f64>, String> {
    ///         let k = if run.algorithm.is_none() { 2.0 } else { 1.0 };
    ///         Ok(run.predicted.iter().map(|t| k * t).collect())
    ///     }
    /// }
    /// let model = presets::mpich2_tcp();
    /// let config = TuneConfig::new(vec![Collective::Bcast], vec![8], vec![8, 1 << 20]);
    /// let plan = plan_tuning(&model, &config)?;
    /// let report = tune(plan, &mut Machine, &config, std::time::Duration::from_secs(60), &mut |_| {});
    /// let (plain, filled) = (report.rules(), report.rules_filled(&model, &config)?);
    /// // the measured sizes keep their decisions; between them the switch may come earlier
    /// for size in [8, 1 << 20] {
    ///     let at = |r: &commcost::export::OmpiRules| r.lookup(Collective::Bcast, 8, size).map(|x| x.algorithm);
    ///     assert_eq!(at(&plain), at(&filled));
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn rules_filled(
        &self,
        model: &dyn CommModel,
        config: &TuneConfig,
    ) -> Result<OmpiRules, TuneError> {
        if self.plan.library != super::Library::OpenMpi {
            return Err(TuneError::Rules(
                "the tuning measured MPICH: write its selection JSON (TuneReport::mpich_json)"
                    .into(),
            ));
        }
        let mut collectives: Vec<OmpiCollectiveRules> = Vec::new();
        let mut start = 0;
        while start < self.plan.cells.len() {
            let first = &self.plan.cells[start];
            let end = start
                + self.plan.cells[start..]
                    .iter()
                    .take_while(|c| {
                        (c.collective, c.processes) == (first.collective, first.processes)
                    })
                    .count();
            let (c, p) = (first.collective, first.processes);
            let decided: Vec<Decided> = (start..end).map(|i| self.decided(i)).collect();
            let price = |name: Option<&str>, bytes: u64| -> Result<f64, TuneError> {
                let problem = Problem::new(p, Message::contiguous(bytes))
                    .with_operator(config.operator)
                    .with_local(config.local);
                let id;
                let name = match name {
                    Some(n) => n,
                    None => {
                        id = fixed_decision(c, p, bytes, true).to_string();
                        &id
                    }
                };
                priced(model, config, c, name, &problem)
            };
            let mut rules: Vec<OmpiRule> = Vec::new();
            for (k, d) in decided.iter().enumerate() {
                let mut from = c.ompi_rules_size(d.bytes, p);
                if let Some(prev) = k.checked_sub(1).map(|j| &decided[j])
                    && !same_rule(&prev.rule, &d.rule)
                    && prev.correction.is_finite()
                    && d.correction.is_finite()
                {
                    for x in powers_between(prev.bytes, d.bytes) {
                        let before = prev.correction * price(prev.name.as_deref(), x)?;
                        let after = d.correction * price(d.name.as_deref(), x)?;
                        if after <= before {
                            from = c.ompi_rules_size(x, p);
                            break;
                        }
                    }
                }
                if rules.last().is_some_and(|r| same_rule(r, &d.rule)) {
                    continue;
                }
                let size = if rules.is_empty() { 0 } else { from };
                rules.push(OmpiRule {
                    size,
                    ..d.rule.clone()
                });
            }
            if collectives.last().is_none_or(|x| x.collective != c) {
                collectives.push(OmpiCollectiveRules {
                    collective: c,
                    blocks: Vec::new(),
                });
            }
            if let Some(x) = collectives.last_mut()
                && x.blocks.last().is_none_or(|b| b.rules != rules)
            {
                x.blocks.push(OmpiBlock {
                    processes: p,
                    rules,
                });
            }
            start = end;
        }
        Ok(OmpiRules { collectives })
    }

    /// Cell `i`'s decision with its measured / predicted ratio (NaN where not measured).
    fn decided(&self, i: usize) -> Decided {
        let cell = &self.plan.cells[i];
        let result = &self.cells[i];
        let measured_default = result.default_median.unwrap_or(f64::NAN);
        match &result.verdict {
            Verdict::Switch {
                algorithm,
                median_ratio,
                ..
            } => {
                let predicted = cell
                    .candidates
                    .iter()
                    .find(|(f, _)| f == algorithm)
                    .map_or(f64::NAN, |(_, t)| *t);
                Decided {
                    bytes: cell.bytes,
                    rule: OmpiRule {
                        size: cell.size,
                        algorithm: algorithm.id,
                        faninout: algorithm.faninout,
                        segment: algorithm.segment,
                        label: format!("{} (measured)", algorithm.name),
                    },
                    name: Some(algorithm.name.clone()),
                    correction: measured_default * median_ratio / predicted,
                }
            }
            _ => Decided {
                bytes: cell.bytes,
                rule: OmpiRule {
                    size: cell.size,
                    algorithm: 0,
                    faninout: 0,
                    segment: 0,
                    label: "default".into(),
                },
                name: None,
                correction: measured_default / cell.default_predicted,
            },
        }
    }
}

fn same_rule(a: &OmpiRule, b: &OmpiRule) -> bool {
    (a.algorithm, a.faninout, a.segment) == (b.algorithm, b.faninout, b.segment)
}

/// The powers of two strictly between `lo` and `hi`, increasing, at most [`MAX_FILL_POINTS`].
fn powers_between(lo: u64, hi: u64) -> Vec<u64> {
    let mut out = Vec::new();
    let mut x = lo.checked_next_power_of_two().unwrap_or(u64::MAX);
    if x == lo {
        x = x.saturating_mul(2);
    }
    while x < hi && out.len() < MAX_FILL_POINTS {
        out.push(x);
        match x.checked_mul(2) {
            Some(y) => x = y,
            None => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::powers_between;

    #[test]
    fn powers_strictly_between() {
        assert_eq!(powers_between(8, 64), vec![16, 32]);
        assert_eq!(powers_between(9, 64), vec![16, 32]);
        assert_eq!(powers_between(8, 16), Vec::<u64>::new());
        assert_eq!(powers_between(512, 4096), vec![1024, 2048]);
        assert_eq!(powers_between(u64::MAX - 1, u64::MAX), Vec::<u64>::new());
        assert_eq!(powers_between(1 << 62, u64::MAX), vec![1 << 63]);
    }
}
