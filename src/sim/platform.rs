//! What a machine adds to the simulation of a model's messages: the transport's eager limit, how
//! its rendezvous sends complete and whether their acknowledgements queue behind the receiver's
//! sends, ranks sharing cores, links shaped by a token bucket. A
//! model file carries it (`commcost calibrate mpi --model shaped` measures the burst), so that
//! every simulation of that model runs on the same platform.

use super::options::{RendezvousCompletion, SimOptions};

/// The platform terms of [`SimOptions`], as a model file stores them; [`Platform::PLAIN`] (the
/// default) adds none.
///
/// # Examples
///
/// ```
/// use commcost::sim::{Platform, RendezvousCompletion, SimOptions};
///
/// let tcp = Platform {
///     rendezvous_above: Some(65522),
///     rendezvous_completion: RendezvousCompletion::AtHandshake,
///     cores: Some(2),
///     link_burst: Some(9100),
///     ack_behind_sends: false,
/// };
/// let options = tcp.apply(SimOptions::default());
/// assert_eq!((options.cores, options.link_burst), (Some(2), Some(9100)));
/// // flags given on top of a file's platform win where they say something
/// let flags = Platform { cores: Some(4), ..Platform::PLAIN };
/// assert_eq!(tcp.overridden_by(flags).cores, Some(4));
/// assert_eq!(tcp.overridden_by(flags).link_burst, Some(9100));
/// assert!(Platform::PLAIN.is_plain() && !tcp.is_plain());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields, try_from = "PlatformFields")
)]
pub struct Platform {
    /// Messages larger than this many bytes use the rendezvous protocol
    /// ([`SimOptions::rendezvous_above`]); `None`: the model's own threshold or none.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub rendezvous_above: Option<u64>,
    /// When a rendezvous send completes ([`SimOptions::rendezvous_completion`]).
    #[cfg_attr(feature = "serde", serde(default))]
    pub rendezvous_completion: RendezvousCompletion,
    /// The ranks share this many cores ([`SimOptions::cores`]); at least 1.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub cores: Option<u32>,
    /// Token-bucket links of this many bytes ([`SimOptions::link_burst`]).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub link_burst: Option<u64>,
    /// Rendezvous acknowledgements wait for the receiver's sending NIC
    /// ([`SimOptions::ack_behind_sends`]).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "is_false"))]
    pub ack_behind_sends: bool,
}

#[cfg(feature = "serde")]
#[allow(clippy::trivially_copy_pass_by_ref)] // (serde's `skip_serializing_if` passes a reference)
fn is_false(x: &bool) -> bool {
    !*x
}

impl Platform {
    /// No platform term: every message eager unless the model says otherwise, a core per rank,
    /// unshaped links.
    pub const PLAIN: Self = Self {
        rendezvous_above: None,
        rendezvous_completion: RendezvousCompletion::WithReceive,
        cores: None,
        link_burst: None,
        ack_behind_sends: false,
    };

    /// Whether this adds no term ([`Platform::PLAIN`]).
    pub fn is_plain(&self) -> bool {
        *self == Self::PLAIN
    }

    /// `options` with these terms: each field that says something replaces the option's.
    #[must_use]
    pub fn apply(&self, options: SimOptions) -> SimOptions {
        SimOptions {
            rendezvous_above: self.rendezvous_above.or(options.rendezvous_above),
            rendezvous_completion: match self.rendezvous_completion {
                RendezvousCompletion::AtHandshake => RendezvousCompletion::AtHandshake,
                RendezvousCompletion::WithReceive => options.rendezvous_completion,
            },
            cores: self.cores.or(options.cores),
            link_burst: self.link_burst.or(options.link_burst),
            ack_behind_sends: self.ack_behind_sends || options.ack_behind_sends,
            ..options
        }
    }

    /// This platform with `over`'s terms where `over` says something (command-line flags on top
    /// of a model file's platform).
    #[must_use]
    pub fn overridden_by(&self, over: Self) -> Self {
        Self {
            rendezvous_above: over.rendezvous_above.or(self.rendezvous_above),
            rendezvous_completion: match over.rendezvous_completion {
                RendezvousCompletion::AtHandshake => RendezvousCompletion::AtHandshake,
                RendezvousCompletion::WithReceive => self.rendezvous_completion,
            },
            cores: over.cores.or(self.cores),
            link_burst: over.link_burst.or(self.link_burst),
            ack_behind_sends: over.ack_behind_sends || self.ack_behind_sends,
        }
    }
}

/// The serialised form of [`Platform`], validated into it (`cores` at least 1).
#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PlatformFields {
    #[serde(default)]
    rendezvous_above: Option<u64>,
    #[serde(default)]
    rendezvous_completion: RendezvousCompletion,
    #[serde(default)]
    cores: Option<u32>,
    #[serde(default)]
    link_burst: Option<u64>,
    #[serde(default)]
    ack_behind_sends: bool,
}

#[cfg(feature = "serde")]
impl TryFrom<PlatformFields> for Platform {
    type Error = crate::ParameterError;

    fn try_from(f: PlatformFields) -> Result<Self, Self::Error> {
        if let Some(cores) = f.cores {
            crate::ParameterError::at_least("cores", u64::from(cores), 1)?;
        }
        Ok(Self {
            rendezvous_above: f.rendezvous_above,
            rendezvous_completion: f.rendezvous_completion,
            cores: f.cores,
            link_burst: f.link_burst,
            ack_behind_sends: f.ack_behind_sends,
        })
    }
}
