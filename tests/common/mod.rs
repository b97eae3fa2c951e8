//! Shared test helpers: every tolerance used by the integration tests is named here.
#![allow(dead_code)]

/// Relative tolerance for values computed by hand from published decimal parameters: the
/// µs → s conversion and a handful of additions lose a few ulps.
pub const HAND_RELATIVE: f64 = 1e-12;

/// Relative tolerance for two formulations of the same prediction.
pub const SAME_PREDICTION_RELATIVE: f64 = 1e-12;

/// Relative tolerance of fits on exact data.
pub const EXACT_FIT_RELATIVE: f64 = 1e-9;

/// One microsecond in seconds.
pub const US: f64 = 1e-6;

/// Asserts that `actual` and `expected` agree to `rel` relative tolerance (approx's
/// `relative_eq`, with an absolute floor of the smallest normal number for zeros).
#[track_caller]
pub fn assert_rel(actual: f64, expected: f64, rel: f64) {
    assert!(
        approx::relative_eq!(
            actual,
            expected,
            epsilon = f64::MIN_POSITIVE,
            max_relative = rel
        ),
        "actual {actual:e} differs from expected {expected:e} by more than {rel:e} relative"
    );
}

/// A tiny deterministic generator (SplitMix64) so tests need no extra dependency and every run
/// sees the same data.
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `[lo, hi)`.
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// Uniform integer in `[lo, hi]`.
    pub fn int(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }
}

/// One model of every kind the crate has, each with realistic parameters and a sender no
/// slower than the network: the models the simulator cross-checks run on.
pub fn model_kinds() -> Vec<(&'static str, Box<dyn commcost::CommModel>)> {
    use commcost::models::copy_transfer::Composition;
    use commcost::models::copy_transfer::Stage;
    use commcost::models::loggpo::Mechanism;
    use commcost::models::loggpo::Progress;
    use commcost::table::Table1D;
    use commcost::{
        CopyTransfer, LogGP, LogGpo, LogNP, LogP, MemoryLogP, MlinesModel, Pram, Protocols, presets,
    };
    let memory = MemoryLogP::new(
        Table1D::new(vec![64.0, 1024.0, 65536.0], vec![2e-9, 1e-9, 0.8e-9]).unwrap(),
        None,
        8,
        8,
    )
    .unwrap();
    let stages = || {
        vec![
            Stage::new("pack", 2e9, 1e-6).unwrap(),
            Stage::new("wire", 1e9, 5e-6).unwrap(),
        ]
    };
    let logp = || LogP::new(5e-6, 1e-6, 2e-6, 4).unwrap();
    let loggpo = LogGpo::new(
        5e-6,
        1e-9,
        16384,
        Progress::Independent,
        Mechanism::T,
        Mechanism::Rta,
        2e-6,
        Table1D::constant(1e-6).unwrap(),
        Table1D::constant(1e-6).unwrap(),
    )
    .unwrap();
    vec![
        ("logp", Box::new(logp())),
        (
            "loggp",
            Box::new(LogGP::new(5e-6, 1e-6, 3e-6, 1e-8).unwrap()),
        ),
        // two protocol ranges whose costs rise at the switch and whose sender is never slower
        // than the network (g < 2o + L in both). The published transports of Hoefler, Lichei &
        // Rehm 2007 (Table 2) are not: with the end-to-end latency split, NMPI/SCI and Open
        // MPI/openib have slow senders (see published_transports_with_a_slow_sender in sim_crosscheck.rs), and
        // Open MPI/gm gets cheaper at its rendezvous switch, where the upper-bound argument for
        // non-power-of-two P (monotone costs) does not hold
        (
            "protocols",
            Box::new(
                Protocols::from_starts(vec![
                    (1, LogGP::new(5e-6, 1e-6, 2e-6, 1e-9).unwrap()),
                    (16385, LogGP::new(20e-6, 1e-6, 3e-6, 0.5e-9).unwrap()),
                ])
                .unwrap(),
            ),
        ),
        ("log3p titan", Box::new(presets::titan_log3p())),
        ("memory logp", Box::new(memory)),
        (
            "copy-transfer sequential",
            Box::new(CopyTransfer::new(stages(), Composition::Sequential, 8).unwrap()),
        ),
        (
            "copy-transfer pipelined",
            Box::new(CopyTransfer::new(stages(), Composition::Pipelined, 8).unwrap()),
        ),
        (
            "mlines",
            Box::new(MlinesModel::new(1e-6, 1e-9, 1e-8, 64).unwrap()),
        ),
        ("loggpo", Box::new(loggpo)),
        ("pram", Box::new(Pram::new(2e-6).unwrap())),
        ("lognp of logp", Box::new(LogNP::from(logp()))),
    ]
}

/// A model that forwards every question to `model` except the optional descriptions it is told
/// not to forward, which then get the trait's defaults (no affine line, no breakpoints, no
/// promise to keep pace, no lag line): the collectives must price the same without them.
#[derive(Debug, Clone, Copy)]
pub struct Forwarding<'a> {
    /// The model asked.
    pub model: &'a dyn commcost::CommModel,
    /// Forward `p2p_affine` and `size_breakpoints`.
    pub affine: bool,
    /// Forward `sender_keeps_pace`.
    pub keeps_pace: bool,
    /// Forward `send_lag_affine`.
    pub lag_lines: bool,
}

impl<'a> Forwarding<'a> {
    /// Forwards the five quantities only.
    pub fn quantities_only(model: &'a dyn commcost::CommModel) -> Self {
        Self {
            model,
            affine: false,
            keeps_pace: false,
            lag_lines: false,
        }
    }
}

impl commcost::CommModel for Forwarding<'_> {
    fn p2p(&self, msg: &commcost::Message) -> f64 {
        self.model.p2p(msg)
    }

    fn send_overhead(&self, msg: &commcost::Message) -> f64 {
        self.model.send_overhead(msg)
    }

    fn recv_overhead(&self, msg: &commcost::Message) -> f64 {
        self.model.recv_overhead(msg)
    }

    fn send_interval(&self, msg: &commcost::Message) -> f64 {
        self.model.send_interval(msg)
    }

    fn gap(&self, msg: &commcost::Message) -> f64 {
        self.model.gap(msg)
    }

    fn quantities(&self, msg: &commcost::Message) -> commcost::Quantities {
        self.model.quantities(msg)
    }

    fn piecewise(&self) -> Option<&dyn commcost::PiecewiseCost> {
        Some(self)
    }
}

impl commcost::PiecewiseCost for Forwarding<'_> {
    fn size_breakpoints(&self) -> Vec<u64> {
        if self.affine {
            self.model.size_breakpoints()
        } else {
            Vec::new()
        }
    }

    fn p2p_affine(&self, bytes: u64) -> Option<commcost::AffineCost> {
        self.affine.then(|| self.model.p2p_affine(bytes)).flatten()
    }

    fn sender_keeps_pace(&self) -> bool {
        self.keeps_pace && self.model.sender_keeps_pace()
    }

    fn send_lag_affine(&self, bytes: u64) -> Option<commcost::AffineCost> {
        self.lag_lines
            .then(|| self.model.send_lag_affine(bytes))
            .flatten()
    }
}

/// The cost of every algorithm of `algorithms` (each must price the problem).
pub fn costs<A: commcost::collectives::Algorithm>(
    algorithms: &[A],
    model: &dyn commcost::CommModel,
    problem: &commcost::collectives::Problem,
) -> Vec<f64> {
    algorithms
        .iter()
        .map(|a| a.cost(model, problem).unwrap())
        .collect()
}

/// The cost of every algorithm of every textbook collective (the pipelined broadcast at one
/// segment size), in a fixed order: two models agree on every collective when these agree.
pub fn every_cost(
    model: &dyn commcost::CommModel,
    problem: &commcost::collectives::Problem,
) -> Vec<f64> {
    use commcost::collectives::{
        Allgather, Allreduce, Alltoall, Barrier, Bcast, Gather, Reduce, Scan, Scatter,
    };
    let mut out = costs(
        &[
            Bcast::Linear,
            Bcast::Binomial,
            Bcast::ScatterAllgather,
            Bcast::Pipelined { segment: 4096 },
        ],
        model,
        problem,
    );
    out.extend(costs(Scan::ALL, model, problem));
    out.extend(costs(Reduce::ALL, model, problem));
    out.extend(costs(Allreduce::ALL, model, problem));
    out.extend(costs(Allgather::ALL, model, problem));
    out.extend(costs(Gather::ALL, model, problem));
    out.extend(costs(Scatter::ALL, model, problem));
    out.extend(costs(Barrier::ALL, model, problem));
    out.extend(costs(Alltoall::ALL, model, problem));
    out
}
