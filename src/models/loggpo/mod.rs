//! LogGPO: overlap of computation and communication for MPI point-to-point messages under
//! eager and rendezvous protocols, progress strategies and transfer mechanisms.

use crate::error::ParameterError;

mod params;
mod timeline;

pub use params::LogGpoParams;

use crate::table::Table1D;
use crate::{AffineCost, CommModel, Message, PiecewiseCost};
use timeline::overlap_ratio;
pub use timeline::{Overlap, ProtocolKind, RendezvousCase, Timeline, TimelineError};

/// How an MPI library makes progress on a message (LogGPO's `Scp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Progress {
    /// DCP: progress only inside MPI calls (the transfer waits for `MPI_Wait`).
    Dependent,
    /// ICP: progress independent of the application (interrupts, helper threads).
    Independent,
}

/// How the message is moved (LogGPO's `Tm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Mechanism {
    /// Transfer (eager).
    T,
    /// Transfer, then acknowledgement (eager).
    TA,
    /// Request, acknowledgement, transfer (rendezvous; e.g. RDMA write after the ACK).
    Rat,
    /// Request, transfer, acknowledgement (rendezvous; e.g. RDMA read).
    Rta,
}

impl Progress {
    fn name(self) -> &'static str {
        match self {
            Self::Dependent => "dependent",
            Self::Independent => "independent",
        }
    }
}

impl Mechanism {
    fn name(self) -> &'static str {
        match self {
            Self::T => "T",
            Self::TA => "TA",
            Self::Rat => "RAT",
            Self::Rta => "RTA",
        }
    }
}

/// The LogGPO model: LogGP's `L` and `G` (the gap `g` is dropped), the eager / rendezvous switch
/// `S`, the progress strategy, the transfer mechanisms, the control-message overhead `O'`, and
/// the size-dependent initialisation `Oi(K)` and memory-copy `Oc(K)` overheads.
///
/// # Formula
///
/// LogGPO (Chen et al. 2009) §2.2, `K` bytes (clamped to at least 1 in `G (K - 1)`), blocking terms
/// `(Tr - Tsw)`, `(Trw - Tsw)` clamped at 0:
///
/// ```text
/// eager, K <= S (mechanism T, either progress):
///   Osw = 0, Os = Oi, Orw = Or = Oc, Tc = Oi + G (K - 1) + L + Oc
/// rendezvous, dependent progress + RAT:
///   (a) Tr > Ts + O' + L:
///       Osw = (Tr - Tsw) + 2O' + L + Oi + G (K - 1),  Os = O' + Osw,
///       Orw = 0,  Or = 2O',  Tc = 4O' + 3L + (Tr - Tsw) + Oi + G (K - 1)
///   (b) Tr <= Ts + O' + L:
///       Osw = (Trw - Tsw) + 2O' + L + Oi + G (K - 1),  Os = O' + Osw,
///       Orw = 2O' + L + Oi + G (K - 1),  Or = O' + Orw,
///       Tc = 4O' + 3L + (Trw - Tsw) + Oi + G (K - 1)
/// rendezvous, independent progress + RTA:
///   Osw = O', Os = 2O',  Orw = O' + Oi, Or = 2O' + Oi,  Tc = 4O' + 3L + Oi + G (K - 1)
/// overlap ratios  Rso = comp / (comp + Os),  Rro = comp / (comp + Or)
/// ```
///
/// **Correction of the paper's text**: the paper writes case (b)'s `Osw` with `(Tr - Tsw)`. In case (b)
/// the sender's wait blocks until the *receiver's wait* sends the ACK, so the blocking time is
/// `(Trw - Tsw)` — the same term the paper's own `Tc` of case (b) uses; this crate uses it.
///
/// Combinations the paper does not analyse (eager with TA, RAT or RTA; rendezvous with
/// dependent progress + RTA, independent progress + RAT, or T / TA) are rejected by
/// [`new`](Self::new) with [`ParameterError::UnsupportedCombination`].
///
/// As a [`CommModel`] the timeline is balanced (`Tr = Ts`, `Trw = Tsw`): eager
/// `Oi + G(K-1) + L + Oc`, rendezvous `4O' + 3L + Oi + G(K-1)`, with `send_overhead = Os` and
/// `recv_overhead = Or`.
///
/// # Examples
///
/// ```
/// use commcost::{CommModel, LogGpo, Message};
/// use commcost::models::loggpo::Mechanism;
/// use commcost::models::loggpo::Progress;
/// use commcost::table::Table1D;
/// use commcost::models::loggpo::Timeline;
///
/// // L = 5 µs, G = 1 ns/B, S = 16 KiB, O' = 2 µs, Oi = 1 µs + 0.1 ns/B, Oc = 0.5 ns/B
/// let model = LogGpo::new(
///     5e-6, 1e-9, 16384, Progress::Dependent, Mechanism::T, Mechanism::Rat, 2e-6,
///     Table1D::linear(1e-6, 0.1e-9)?, Table1D::linear(0.0, 0.5e-9)?,
/// )?;
/// // 1 MiB, balanced: 4O' + 3L + Oi + G (K - 1) = 8 + 15 + 105.8576 + 1048.575 µs
/// let big = Message::contiguous(1 << 20);
/// assert!((model.p2p(&big) - 1177.4326e-6).abs() < 1e-12);
/// // 200 µs of computation hides none of the transfer: it happens inside MPI_Wait
/// let o = model.timeline(&big, &Timeline::balanced(200e-6))?;
/// assert!(o.send_overlap < 0.2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # References
///
/// LogGPO: "An accurate communication model for performance prediction of MPI programs"
/// W. Chen, J. Zhai, J. Zhang, W. Zheng, Science in China Series F 52(10), 2009, §2.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "LogGpoParams", into = "LogGpoParams")
)]
pub struct LogGpo {
    latency: f64,
    gap_per_byte: f64,
    eager_limit: u64,
    progress: Progress,
    eager_mechanism: Mechanism,
    rendezvous_mechanism: Mechanism,
    control_overhead: f64,
    init_overhead: Table1D,
    copy_overhead: Table1D,
}

impl LogGpo {
    /// Builds a LogGPO parameter set: `L` and `G` (seconds, seconds per byte), the eager limit
    /// `S` (bytes; `K <= S` is eager), the progress strategy, the mechanisms used by each
    /// protocol, `O'` (seconds), and `Oi(K)`, `Oc(K)` (seconds by message size).
    ///
    /// # Errors
    ///
    /// [`ParameterError::OutOfRange`] / [`ParameterError::NegativeCost`] for negative or
    /// non-finite values, [`ParameterError::UnsupportedCombination`] for a combination the paper
    /// does not analyse.
    #[allow(clippy::too_many_arguments)] // the model's nine parameters, each named in the docs
    pub fn new(
        latency: f64,
        gap_per_byte: f64,
        eager_limit: u64,
        progress: Progress,
        eager_mechanism: Mechanism,
        rendezvous_mechanism: Mechanism,
        control_overhead: f64,
        init_overhead: Table1D,
        copy_overhead: Table1D,
    ) -> Result<Self, ParameterError> {
        if eager_mechanism != Mechanism::T {
            return Err(ParameterError::UnsupportedCombination {
                protocol: "eager",
                progress: progress.name(),
                mechanism: eager_mechanism.name(),
            });
        }
        let analysed = matches!(
            (progress, rendezvous_mechanism),
            (Progress::Dependent, Mechanism::Rat) | (Progress::Independent, Mechanism::Rta)
        );
        if !analysed {
            return Err(ParameterError::UnsupportedCombination {
                protocol: "rendezvous",
                progress: progress.name(),
                mechanism: rendezvous_mechanism.name(),
            });
        }
        init_overhead.check_non_negative("init_overhead")?;
        copy_overhead.check_non_negative("copy_overhead")?;
        Ok(Self {
            latency: ParameterError::non_negative("latency", latency)?,
            gap_per_byte: ParameterError::non_negative("gap_per_byte", gap_per_byte)?,
            eager_limit,
            progress,
            eager_mechanism,
            rendezvous_mechanism,
            control_overhead: ParameterError::non_negative("control_overhead", control_overhead)?,
            init_overhead,
            copy_overhead,
        })
    }

    /// `L`, seconds.
    pub fn latency(&self) -> f64 {
        self.latency
    }

    /// `G`, seconds per byte.
    pub fn gap_per_byte(&self) -> f64 {
        self.gap_per_byte
    }

    /// `S`: the largest eager message, bytes.
    pub fn eager_limit(&self) -> u64 {
        self.eager_limit
    }

    /// The progress strategy `Scp`.
    pub fn progress(&self) -> Progress {
        self.progress
    }

    /// The mechanism of eager messages.
    pub fn eager_mechanism(&self) -> Mechanism {
        self.eager_mechanism
    }

    /// The mechanism of rendezvous messages.
    pub fn rendezvous_mechanism(&self) -> Mechanism {
        self.rendezvous_mechanism
    }

    /// `O'`: control-message overhead, seconds.
    pub fn control_overhead(&self) -> f64 {
        self.control_overhead
    }

    /// `Oi(K)`, seconds.
    pub fn init_overhead(&self) -> &Table1D {
        &self.init_overhead
    }

    /// `Oc(K)`, seconds.
    pub fn copy_overhead(&self) -> &Table1D {
        &self.copy_overhead
    }

    /// The protocol a message of `bytes` bytes uses.
    pub fn protocol(&self, bytes: u64) -> ProtocolKind {
        if bytes <= self.eager_limit {
            ProtocolKind::Eager
        } else {
            ProtocolKind::Rendezvous
        }
    }

    /// Every LogGPO quantity for `msg` on `timeline`.
    ///
    /// # Errors
    ///
    /// [`TimelineError`] for non-finite times, negative computation, or a wait that arrives
    /// before its own call.
    pub fn timeline(&self, msg: &Message, timeline: &Timeline) -> Result<Overlap, TimelineError> {
        timeline.validate()?;
        Ok(self.analyse(msg, timeline))
    }

    /// The formulas of §2.2 on a validated timeline.
    fn analyse(&self, msg: &Message, timeline: &Timeline) -> Overlap {
        let k = msg.bytes();
        let oi = self.init_overhead.eval(k as f64).max(0.0);
        let transfer = self.gap_per_byte * k.saturating_sub(1) as f64;
        let (l, o) = (self.latency, self.control_overhead);
        let comp = timeline.computation;
        let (protocol, case, os, or, osw, orw, tc) = match self.protocol(k) {
            ProtocolKind::Eager => {
                let oc = self.copy_overhead.eval(k as f64).max(0.0);
                (
                    ProtocolKind::Eager,
                    None,
                    oi,
                    oc,
                    0.0,
                    oc,
                    oi + transfer + l + oc,
                )
            }
            ProtocolKind::Rendezvous => match self.progress {
                Progress::Dependent => {
                    let late = timeline.irecv > timeline.isend + o + l;
                    let blocking = if late {
                        timeline.irecv - timeline.send_wait
                    } else {
                        timeline.recv_wait - timeline.send_wait
                    }
                    .max(0.0);
                    let osw = blocking + 2.0 * o + l + oi + transfer;
                    let tc = 4.0 * o + 3.0 * l + blocking + oi + transfer;
                    if late {
                        let case = Some(RendezvousCase::LateReceiver);
                        (
                            ProtocolKind::Rendezvous,
                            case,
                            o + osw,
                            2.0 * o,
                            osw,
                            0.0,
                            tc,
                        )
                    } else {
                        let orw = 2.0 * o + l + oi + transfer;
                        let case = Some(RendezvousCase::EarlyReceiver);
                        (
                            ProtocolKind::Rendezvous,
                            case,
                            o + osw,
                            o + orw,
                            osw,
                            orw,
                            tc,
                        )
                    }
                }
                Progress::Independent => {
                    let tc = 4.0 * o + 3.0 * l + oi + transfer;
                    (
                        ProtocolKind::Rendezvous,
                        None,
                        2.0 * o,
                        2.0 * o + oi,
                        o,
                        o + oi,
                        tc,
                    )
                }
            },
        };
        Overlap {
            protocol,
            case,
            send_overhead: os,
            recv_overhead: or,
            send_wait_overhead: osw,
            recv_wait_overhead: orw,
            total: tc,
            send_overlap: overlap_ratio(comp, os),
            recv_overlap: overlap_ratio(comp, or),
        }
    }

    /// The balanced-timeline analysis with no computation (the [`CommModel`] view; this
    /// timeline is valid by construction).
    fn balanced(&self, msg: &Message) -> Overlap {
        self.analyse(msg, &Timeline::balanced(0.0))
    }

    /// The smallest computation that reaches a sender overlap ratio `Rso >= ratio` on the
    /// balanced timeline: `comp = ratio · Os / (1 - ratio)` (`Os` does not depend on `comp`
    /// there).
    ///
    /// # Errors
    ///
    /// [`TimelineError::OutOfRange`] for a ratio outside `[0, 1]`;
    /// [`TimelineError::UnreachableRatio`] for `ratio = 1` with `Os > 0`.
    ///
    /// # Examples
    ///
    /// ```
    /// # use commcost::{LogGpo, Message};
    /// # use commcost::models::loggpo::Mechanism;
    /// # use commcost::models::loggpo::Progress;
    /// # use commcost::table::Table1D;
    /// let model = LogGpo::new(
    ///     5e-6, 1e-9, 16384, Progress::Independent, Mechanism::T, Mechanism::Rta, 2e-6,
    ///     Table1D::constant(1e-6)?, Table1D::constant(0.0)?,
    /// )?;
    /// // rendezvous with independent progress: Os = 2O' = 4 µs; 90 % needs 9 · 4 = 36 µs
    /// let comp = model.computation_for_send_overlap(&Message::contiguous(1 << 20), 0.9)?;
    /// assert!((comp - 36e-6).abs() < 1e-15);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn computation_for_send_overlap(
        &self,
        msg: &Message,
        ratio: f64,
    ) -> Result<f64, TimelineError> {
        if !(0.0..=1.0).contains(&ratio) {
            return Err(TimelineError::OutOfRange {
                name: "ratio",
                value: ratio,
                expected: "in [0, 1]",
            });
        }
        let os = self.balanced(msg).send_overhead;
        if ratio >= 1.0 {
            return if os > 0.0 {
                Err(TimelineError::UnreachableRatio {
                    ratio,
                    overhead: os,
                })
            } else {
                Ok(0.0)
            };
        }
        Ok(ratio * os / (1.0 - ratio))
    }

    /// The sender's exposed (not overlapped) communication time with `computation` seconds of
    /// work between `MPI_Isend` and `MPI_Wait`, on the balanced timeline:
    ///
    /// ```text
    /// exposed = max(Os, Tc - comp)
    /// ```
    ///
    /// The sender always pays its own overhead `Os` (CPU time inside MPI calls, which LogGPO says
    /// cannot overlap); and the communication cannot finish before `Tc`, so whatever of `Tc`
    /// the computation does not cover is waited for. The paper's analysis assumes the first
    /// term applies ("the duration of user computation inserted is large enough").
    ///
    /// # Errors
    ///
    /// [`TimelineError::OutOfRange`] for negative or non-finite computation.
    pub fn exposed_send_time(&self, msg: &Message, computation: f64) -> Result<f64, TimelineError> {
        let o = self.timeline(msg, &Timeline::balanced(computation))?;
        Ok(o.send_overhead.max(o.total - computation))
    }
}

impl CommModel for LogGpo {
    /// The eager limit `S`: messages of `K > S` bytes use the rendezvous protocol.
    fn rendezvous_above(&self) -> Option<u64> {
        Some(self.eager_limit)
    }

    /// Balanced `Tc`: eager `Oi + G(K-1) + L + Oc`, rendezvous `4O' + 3L + Oi + G(K-1)`.
    fn p2p(&self, msg: &Message) -> f64 {
        self.balanced(msg).total
    }

    /// Balanced `Os`.
    fn send_overhead(&self, msg: &Message) -> f64 {
        self.balanced(msg).send_overhead
    }

    /// Balanced `Or`.
    fn recv_overhead(&self, msg: &Message) -> f64 {
        self.balanced(msg).recv_overhead
    }

    /// `Tc - L + G`: everything of one message but its latency, with all `K` bytes on the wire.
    ///
    /// LogGPO does not overlap a message's own overheads with its transmission (Chen, Zhai,
    /// Zhang, Zheng, "LogGPO: An accurate communication model for performance prediction of MPI
    /// programs", Science in China Series F 52(10), 2009, §2: `Tc = Oi + G (K - 1) + L + Oc`
    /// eager, `4O' + 3L + Oi + G (K - 1)` rendezvous), so the next message of a stream cannot
    /// start before the current one's initialisation, its `K` bytes (`G K`) and its copy or
    /// handshake are done; only the latency `L` is in flight. With the overheads' default of
    /// `send_overhead` alone, a pipeline of `q` segments would come out cheaper than one message
    /// of the same bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::{CommModel, LogGpo, Message};
    /// use commcost::models::loggpo::Mechanism;
    /// use commcost::models::loggpo::Progress;
    /// use commcost::table::Table1D;
    /// let model = LogGpo::new(
    ///     5e-6, 1e-9, 16384, Progress::Independent, Mechanism::T, Mechanism::Rta, 2e-6,
    ///     Table1D::constant(1e-6)?, Table1D::constant(3e-6)?,
    /// )?;
    /// // eager 1000 bytes: Oi + G K + Oc = 1 µs + 1 µs + 3 µs
    /// let interval = model.send_interval(&Message::contiguous(1000));
    /// assert!((interval - 5e-6).abs() < 1e-14);
    /// # Ok::<(), commcost::ParameterError>(())
    /// ```
    fn send_interval(&self, msg: &Message) -> f64 {
        let overlap = self.balanced(msg);
        (overlap.total - self.latency + self.gap_per_byte).max(overlap.send_overhead)
    }

    fn piecewise(&self) -> Option<&dyn PiecewiseCost> {
        Some(self)
    }
}

impl PiecewiseCost for LogGpo {
    /// `G <= L`: the lag `I - T` is `G - L` on every size (see
    /// [`send_lag_affine`](Self::send_lag_affine)), so the sender keeps pace exactly when the
    /// time per byte does not exceed the latency — the usual case (`G` is nanoseconds per byte,
    /// `L` microseconds); a sender whose next message must wait for more than the latency
    /// (`G > L`) lags on every size.
    fn sender_keeps_pace(&self) -> bool {
        self.gap_per_byte <= self.latency
    }

    /// The constant `G - L` on every size. With the balanced timeline the interval is
    /// `I = max(Tc - L + G, Os)`, so `I - T = max(G - L, Os - Tc)` (Chen, Zhai, Zhang & Zheng,
    /// Science in China F 52(10), 2009, §2): eager `Os - Tc = -(G (K - 1) + L + Oc) <= -L`,
    /// rendezvous with independent progress `Os - Tc = -(2O' + 3L + Oi + G (K - 1)) <= -L`,
    /// both at most `G - L`, so `I - T = G - L`; rendezvous with dependent progress (case (b)
    /// on the balanced timeline) `Os - Tc = -O' - 2L <= 0`, so `I - T = G - L` wherever it is
    /// positive and `<= 0` wherever `G - L` is.
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::{CommModel, LogGpo, Message, PiecewiseCost};
    /// use commcost::models::loggpo::Mechanism;
    /// use commcost::models::loggpo::Progress;
    /// use commcost::table::Table1D;
    /// // G = 2 ns/B above L = 1 ns: the sender lags 1 ns on every size
    /// let model = LogGpo::new(
    ///     1e-9, 2e-9, 16384, Progress::Dependent, Mechanism::T, Mechanism::Rat, 2e-6,
    ///     Table1D::constant(1e-6)?, Table1D::constant(1e-6)?,
    /// )?;
    /// assert!(!model.sender_keeps_pace());
    /// let m = Message::contiguous(1000);
    /// let lag = model.send_interval(&m) - model.p2p(&m);
    /// assert!((model.send_lag_affine(1000).unwrap().at(1000) - lag).abs() < 1e-18);
    /// assert!((lag - 1e-9).abs() < 1e-18);
    /// # Ok::<(), commcost::ParameterError>(())
    /// ```
    fn send_lag_affine(&self, _bytes: u64) -> Option<AffineCost> {
        Some(AffineCost::everywhere(
            self.gap_per_byte - self.latency,
            0.0,
        ))
    }

    /// Balanced `Tc` as a line on the sizes of one protocol where the tables' segments around
    /// `bytes` apply (and stay non-negative, as the model clamps them): eager
    /// `Oi(K) + Oc(K) + L - G + G K` for `1 <= K <= S`, rendezvous `Oi(K) + 4O' + 3L - G + G K`
    /// for `K > S`; a 0-byte message on its own (`G (K - 1)` is 0 there). `None` where a
    /// table's segment turns negative.
    fn p2p_affine(&self, bytes: u64) -> Option<AffineCost> {
        if bytes == 0 {
            let t = self.p2p(&Message::contiguous(0));
            return AffineCost::everywhere(t, 0.0).within(0, 0);
        }
        let per_byte = self.gap_per_byte;
        let transfer = AffineCost::everywhere(-per_byte, per_byte).within(1, u64::MAX)?;
        let line = self
            .init_overhead
            .non_negative_affine_piece(bytes)?
            .plus(transfer)?;
        match self.protocol(bytes) {
            ProtocolKind::Eager => line
                .plus(self.copy_overhead.non_negative_affine_piece(bytes)?)?
                .plus(AffineCost::everywhere(self.latency, 0.0))?
                .within(1, self.eager_limit),
            ProtocolKind::Rendezvous => {
                let handshake = 4.0 * self.control_overhead + 3.0 * self.latency;
                line.plus(AffineCost::everywhere(handshake, 0.0))?
                    .within(self.eager_limit.saturating_add(1), u64::MAX)
            }
        }
    }

    /// `S + 1`, the first rendezvous size.
    fn size_breakpoints(&self) -> Vec<u64> {
        self.eager_limit.checked_add(1).into_iter().collect()
    }
}
