//! The MPICH selection JSON of a tuning of MPICH: [`TuneReport::mpich_json`].

use super::measure::{TuneReport, Verdict};
use super::{Library, TuneError};
use crate::export::{MpichDecision, mpich_json_decided};

impl TuneReport {
    /// MPICH's collective selection JSON of the decisions of a tuning of MPICH
    /// ([`Library::Mpich`]): MPICH's default table of the tuned version with each tuned
    /// collective's intra-communicator subtree replaced — per communicator size and from each
    /// measured size on, the switched-to function, or MPICH's own subtree (its decision,
    /// unchanged) where the default stays ([`mpich_json_decided`]). MPICH uses it with
    /// `MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=<file>` and
    /// `MPIR_CVAR_DEVICE_COLLECTIVES=none`, as the tuning measured.
    ///
    /// # Errors
    ///
    /// [`TuneError::Rules`] for a tuning of Open MPI, or decisions MPICH's file cannot hold.
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::collectives::Collective;
    /// use commcost::export::{MpichVersion, mpich_decide};
    /// use commcost::presets;
    /// use commcost::tune::{Library, Run, Runner, TuneConfig, plan_tuning, tune};
    ///
    /// // a machine where every forced algorithm takes half the model's time: each measured
    /// // cell with a candidate switches to it
    /// struct Machine;
    /// impl Runner for Machine {
    ///     fn time(&mut self, run: &Run) -> Result<Vec<f64>, String> {
    ///         let k = if run.algorithm.is_none() { 1.0 } else { 0.5 };
    ///         Ok(run.predicted.iter().map(|t| k * t.max(1e-6)).collect())
    ///     }
    /// }
    /// let config = TuneConfig {
    ///     library: Library::Mpich(MpichVersion::V4_0),
    ///     ..TuneConfig::new(vec![Collective::Bcast], vec![4], vec![8, 1 << 20])
    /// };
    /// let model = presets::mpich2_tcp();
    /// let plan = plan_tuning(&model, &config)?;
    /// let report = tune(plan, &mut Machine, &config, std::time::Duration::from_secs(60), &mut |_| {});
    /// let json = report.mpich_json()?;
    /// let chosen = mpich_decide(&json, Collective::Bcast, 4, 1 << 20);
    /// assert!(chosen.is_some_and(|f| f.starts_with("MPIR_Bcast_intra_")));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn mpich_json(&self) -> Result<String, TuneError> {
        let Library::Mpich(version) = self.plan.library else {
            return Err(TuneError::Rules(
                "the tuning measured Open MPI: write its rules file (TuneReport::rules)".into(),
            ));
        };
        let decisions: Vec<MpichDecision> = self
            .cells
            .iter()
            .zip(&self.plan.cells)
            .map(|(result, cell)| MpichDecision {
                collective: cell.collective,
                processes: cell.processes,
                size: cell.size,
                function: match &result.verdict {
                    Verdict::Switch { algorithm, .. } => algorithm.mpich.clone(),
                    _ => None,
                },
            })
            .collect();
        mpich_json_decided(version, &decisions).map_err(|e| TuneError::Rules(e.to_string()))
    }
}
