//! Broadcast algorithms.

use crate::CommModel;
use crate::collectives::CollectiveError;
use crate::collectives::eval::{binomial_tree_of_blocks, ceil_div, setup};
use crate::collectives::{Algorithm, Problem};
use crate::util::bits::ceil_log2;

/// Broadcast algorithms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub enum Bcast {
    /// The root sends `P - 1` consecutive messages: `T(m) + (P - 2) I(m)` (Cameron, Ge & Sun, "log_n P and log_3 P",
    /// IEEE Trans. Computers 56(3), 2007, Sec. 4.3.3; LogGP:
    /// `2o + L + (P-1) G k + (P-2) g` when `g + kG >= o`; log_3 P: `P (o_mw/2 + l_mw/2) + o_net`).
    Linear,
    /// Binomial tree: `h T(m) + (h - 1) g(m)` (Cameron, Ge & Sun 2007, Sec. 4.3.3; LogGP `h (2o + L + kG) + (h-1) g`,
    /// log_3 P `h (o_mw + l_mw + o_net)`).
    Binomial,
    /// Van de Geijn: binomial scatter of `c = ⌈m/P⌉`-byte chunks, then a ring allgather:
    /// `Σ_{k=1}^{h} T(c · min(2^(h-k), P - 2^(h-k))) + (h - 1) g(c) + (P - 1) T(c)`.
    ScatterAllgather,
    /// Pipelined chain with `segment`-byte segments, `q = ⌈m / segment⌉`:
    /// `(P - 1) T(s) + (q - 1) max(I(s), or(s) + os(s))`, `s = min(segment, m)` — the first
    /// segment crosses `P - 1` links, each further one follows a step later, a step being what
    /// an inner process needs to receive and forward a segment.
    Pipelined {
        /// Segment size in bytes (at least 1).
        segment: u64,
    },
}

impl Bcast {
    /// The segment size minimising the pipelined broadcast among `m` and the powers of two below
    /// it that cut it into at most 2^16 segments (the segment sizes MPI libraries use; finer
    /// pipelines are not used in practice): at most 17 evaluations.
    pub fn best_segment(model: &dyn CommModel, problem: &Problem) -> u64 {
        const MAX_SEGMENTS: u64 = 1 << 16;
        let m = problem.message.bytes().max(1);
        (0..64)
            .map(|k| 1u64 << k)
            .skip_while(|&s| m.div_ceil(s) > MAX_SEGMENTS)
            .take_while(|&s| s < m)
            .chain(std::iter::once(m))
            .map(|segment| {
                let cost = Bcast::Pipelined { segment }
                    .cost(model, problem)
                    .unwrap_or(f64::INFINITY);
                (segment, cost)
            })
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map_or(m, |(segment, _)| segment)
    }
}

impl Algorithm for Bcast {
    fn name(&self) -> &'static str {
        self.table_name()
    }

    fn label(&self) -> String {
        match self {
            Self::Pipelined { segment } => format!("pipelined, {segment} B segments"),
            other => other.name().to_string(),
        }
    }

    fn cost(&self, model: &dyn CommModel, problem: &Problem) -> Result<f64, CollectiveError> {
        if let Self::Pipelined { segment: 0 } = self {
            return Err(CollectiveError::ZeroSegment);
        }
        let Some((mut x, m, p)) = setup(model, problem)? else {
            return Ok(0.0);
        };
        let h = f64::from(ceil_log2(p));
        Ok(match *self {
            Self::Linear => x.p2p(m) + (p - 2) as f64 * x.interval(m),
            Self::Binomial => h * x.p2p(m) + (h - 1.0) * x.gap(m),
            Self::ScatterAllgather => {
                let c = ceil_div(m, p);
                // the ring allgather's P - 1 rounds, spaced max(T, I), and as far from the
                // root's last scatter send of c bytes
                binomial_tree_of_blocks(&mut x, c, p)
                    + (p - 1) as f64 * x.p2p(c)
                    + (p - 1) as f64 * x.lag(c, 0.0)
            }
            Self::Pipelined { segment } => {
                let s = segment.min(m);
                let q = m.div_ceil(segment).max(1);
                let t = x.quantities(s);
                let step = t.send_interval.max(t.recv_overhead + t.send_overhead);
                (p - 1) as f64 * t.p2p + (q - 1) as f64 * step
            }
        })
    }

    fn candidates(model: &dyn CommModel, problem: &Problem) -> Vec<Self> {
        vec![
            Self::Linear,
            Self::Binomial,
            Self::ScatterAllgather,
            Self::Pipelined {
                segment: Self::best_segment(model, problem),
            },
        ]
    }
}
