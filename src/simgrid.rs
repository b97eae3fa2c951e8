//! A model as SimGrid/SMPI parameters: the piecewise `smpi/os`, `smpi/or`, `smpi/ois`
//! overheads, the `smpi/lat-factor` and `smpi/bw-factor` network corrections and a platform
//! link latency and bandwidth, so that a calibration done with this crate drives SMPI
//! simulations.
//!
//! # SMPI's configuration (SimGrid documentation, `docs/source/Configuring_SimGrid.rst`)
//!
//! * `smpi/os`, `smpi/or`, `smpi/ois` — CPU time injected into `MPI_Send`, `MPI_Recv` and
//!   `MPI_Isend`: sections `size:offset:per-byte` separated by `;`. A message of `s` bytes uses
//!   the section with the largest first value **below** `s` ("if message size is greater than
//!   this value"), and the first section when `s` is at most every first value; the cost is
//!   `offset + s · per-byte` seconds.
//! * `smpi/lat-factor`, `smpi/bw-factor` — with `network/model:SMPI`, sections `size:factor`:
//!   a message of `s` bytes uses the section with the largest first value below `s`, and
//!   factor 1 when `s` is at most every first value (SimGrid's `FactorSet::operator()`,
//!   `src/kernel/resource/FactorSet.cpp`, 3.32; the documentation's "65472 bytes and more" is
//!   one byte off); the link latency is multiplied by the latency factor and the link
//!   bandwidth by the bandwidth factor.
//! * `smpi/send-is-detached-thresh` — messages below it (bytes) return from `MPI_Send`
//!   immediately (eager). SimGrid 3.32 injects `smpi/os` and `smpi/or` only into such
//!   detached sends (a ping-pong at and above the threshold lacks both), so the export sets
//!   it to 2^31 - 1, its largest value.
//!
//! A message of `s` bytes between two hosts then takes, without contention,
//!
//! ```text
//! T_SMPI(s) = os(s) + lat_factor(s) λ + s / (bw_factor(s) β) + or(s)
//! ```
//!
//! (the sender's injected time, the transfer over a route of latency `λ` and bandwidth `β`, the
//! receiver's injected time).
//!
//! # The mapping
//!
//! The sizes `0 < b_1 < b_2 < …` cut the size axis into sections `(b_k, b_{k+1}]`: the powers
//! of two up to [`SmpiOptions::max_bytes`] and, for every protocol switch of the model
//! ([`PiecewiseCost::size_breakpoints`](crate::PiecewiseCost::size_breakpoints)) at `s`, `s - 1` — so a new protocol range begins a section.
//! On each section every quantity is the line through its values at the two ends, `b_k + 1` and
//! `b_{k+1}`; consecutive sections on the same line (or with the same factor) are written once:
//!
//! | SMPI | model | where it is exact |
//! |---|---|---|
//! | `smpi/os` | `send_overhead` `o_s(m)` | at both ends of every section; everywhere for overheads affine within each protocol range (LogP, LogGP, protocol ranges, pLogP at its table sizes when those are powers of two) |
//! | `smpi/or` | `recv_overhead` `o_r(m)` | as `smpi/os` |
//! | `smpi/ois` | `send_interval` `I(m)` (LogGP `max(o, g + (s-1) G)`) | as `smpi/os`; SMPI also shares link bandwidth among concurrent flows, which can space back-to-back sends further than `I` |
//! | `lat-factor · λ`, `bw-factor · β` | the wire time `T(m) - o_s(m) - o_r(m)` | at the section ends when that is `a_k + c_k s` with `a_k, c_k >= 0`; a negative intercept or slope is clamped to 0 ([`SmpiConfig::max_relative_error`] reports the effect) |
//! | `smpi/send-is-detached-thresh` | 2^31 - 1: every send detached, so that SMPI charges the overheads at every size | the model's rendezvous protocol (a sender waiting for its receiver) is not mapped; its cost is in the model's `p2p` of those sizes |
//!
//! `λ` is the smallest positive section intercept (latency factors are then 0 or `>= 1`) and
//! `β` the largest section bandwidth `1 / c_k`, at most [`MAX_BANDWIDTH`] (bandwidth factors
//! in `(0, 1]`). What SMPI cannot express: the model's `gap` beyond the send interval (there
//! is no per-message gap in SMPI), stride- and layout-dependent costs (SMPI sees only sizes:
//! the export prices contiguous messages), LogGPO's overlap, and contention, which SimGrid
//! computes itself from its flow model. SimGrid's TCP window bound (`network/TCP-gamma`,
//! a rate of at most `γ / (2 λ)`) must stay above `β`.
//!
//! # Checked in SimGrid
//!
//! `scripts/simgrid_check.sh` runs a ping-pong under SimGrid 3.32's `smpirun` on exported
//! platforms: for LogGP (`L` = 5 µs, `o` = 1 µs, `g` = 2 µs, `G` = 1 ns/B) and the
//! `open-mpi-openib` preset the simulated half round trip is within 0.25 % of the model's
//! `p2p` from 1 byte to 1 MiB (SMPI adds about 15 ns per message). One deviation was seen
//! there: SMPI switched to the next bandwidth factor between 12270 and 12280 bytes for a
//! section boundary written at 12288, so sizes up to about 20 bytes below a protocol switch get
//! the next protocol's bandwidth.
//!
//! # Examples
//!
//! ```
//! use commcost::simgrid::{SmpiOptions, smpi_config};
//! use commcost::{CommModel, Message, presets};
//!
//! let model = presets::open_mpi_openib();
//! let smpi = smpi_config(&model, &SmpiOptions::default())?;
//! // the send overhead of a 4 KiB message, as SMPI reads `smpi/os`
//! let os = smpi.os_at(4096);
//! assert!((os - model.send_overhead(&Message::contiguous(4096))).abs() < 1e-15);
//! assert!(smpi.platform_xml(4).contains("smpi/os"));
//! # Ok::<(), commcost::export::ExportError>(())
//! ```

use std::fmt::Write as _;

use crate::export::ExportError;
use crate::{CommModel, Message};

/// The largest bandwidth written (bytes per second), standing for "no per-byte cost".
pub const MAX_BANDWIDTH: f64 = 1e15;

/// `smpi/send-is-detached-thresh` as written: SimGrid's largest (a C `int`).
pub const DETACHED_BELOW: u64 = (1 << 31) - 1;

/// Bounds of the export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SmpiOptions {
    /// The largest power of two at which a section ends (bytes, at least 2); the last section
    /// extends its line beyond it. Default 2^30.
    pub max_bytes: u64,
}

impl Default for SmpiOptions {
    fn default() -> Self {
        Self { max_bytes: 1 << 30 }
    }
}

/// One `size:offset:per-byte` section of `smpi/os`, `smpi/or` or `smpi/ois`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SmpiSection {
    /// The section applies to messages larger than this (bytes).
    pub above: u64,
    /// Seconds.
    pub offset: f64,
    /// Seconds per byte.
    pub per_byte: f64,
}

/// One `size:factor` section of `smpi/lat-factor` or `smpi/bw-factor`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SmpiFactor {
    /// The section applies to messages larger than this (bytes).
    pub above: u64,
    /// The factor.
    pub factor: f64,
}

/// A model as SMPI parameters ([module docs](self)).
#[derive(Debug, Clone, PartialEq)]
pub struct SmpiConfig {
    /// `smpi/os`: the send overhead.
    pub os: Vec<SmpiSection>,
    /// `smpi/or`: the receive overhead.
    pub or: Vec<SmpiSection>,
    /// `smpi/ois`: the send interval.
    pub ois: Vec<SmpiSection>,
    /// Route latency `λ`, seconds.
    pub latency: f64,
    /// Route bandwidth `β`, bytes per second.
    pub bandwidth: f64,
    /// `smpi/lat-factor`.
    pub lat_factor: Vec<SmpiFactor>,
    /// `smpi/bw-factor`.
    pub bw_factor: Vec<SmpiFactor>,
    /// `smpi/send-is-detached-thresh`: [`DETACHED_BELOW`].
    pub detached_below: u64,
    /// The largest `|T_SMPI(s) - T(s)| / T(s)` over both ends of every section (0 where
    /// `T(s) = 0`).
    pub max_relative_error: f64,
}

/// The section ends `b_0 = 0 < b_1 < …` ([module docs](self)).
fn boundaries(model: &dyn CommModel, max_bytes: u64) -> Vec<u64> {
    let mut b: Vec<u64> = std::iter::once(0)
        .chain((1..64).map(|k| 1u64 << k).take_while(|&p| p <= max_bytes))
        .chain(
            model
                .size_breakpoints()
                .into_iter()
                .filter(|&s| s >= 2 && s - 1 <= max_bytes)
                .map(|s| s - 1),
        )
        .collect();
    b.sort_unstable();
    b.dedup();
    b
}

/// `(lo, hi)` of every section: `(b_k + 1, b_{k+1})`, the last one `(b + 1, 2b)`.
fn section_ends(b: &[u64]) -> Vec<(u64, u64, u64)> {
    b.iter()
        .enumerate()
        .map(|(k, &above)| {
            let lo = above + 1;
            let hi = b
                .get(k + 1)
                .copied()
                .unwrap_or_else(|| above.saturating_mul(2))
                .max(lo);
            (above, lo, hi)
        })
        .collect()
}

/// The line through `(lo, f(lo))` and `(hi, f(hi))`: `(offset, per_byte)`.
fn line(f: impl Fn(u64) -> f64, lo: u64, hi: u64) -> (f64, f64) {
    let (y0, y1) = (f(lo), f(hi));
    let per_byte = if hi > lo {
        (y1 - y0) / (hi - lo) as f64
    } else {
        0.0
    };
    (y0 - per_byte * lo as f64, per_byte)
}

fn finite(name: &'static str, x: f64) -> Result<f64, ExportError> {
    if x.is_finite() {
        Ok(x)
    } else {
        Err(ExportError::Grid {
            what: name,
            detail: format!("the model gives {x}, not a finite time"),
        })
    }
}

/// The model as SMPI parameters.
///
/// # Errors
///
/// [`ExportError::Grid`] for `max_bytes < 2` or a model quantity that is not finite.
pub fn smpi_config(
    model: &dyn CommModel,
    options: &SmpiOptions,
) -> Result<SmpiConfig, ExportError> {
    if options.max_bytes < 2 {
        return Err(ExportError::Grid {
            what: "max_bytes",
            detail: format!("{} is below 2", options.max_bytes),
        });
    }
    let b = boundaries(model, options.max_bytes);
    let ends = section_ends(&b);
    let q = |s: u64| model.quantities(&Message::contiguous(s));
    let sections =
        |name: &'static str, f: &dyn Fn(u64) -> f64| -> Result<Vec<SmpiSection>, ExportError> {
            ends.iter()
                .map(|&(above, lo, hi)| {
                    let (offset, per_byte) = line(f, lo, hi);
                    Ok(SmpiSection {
                        above,
                        offset: finite(name, offset)?,
                        per_byte: finite(name, per_byte)?,
                    })
                })
                .collect()
        };
    // consecutive sections on one line say nothing new: keep the first
    let merge = |mut v: Vec<SmpiSection>| {
        v.dedup_by(|b, a| {
            a.offset.to_bits() == b.offset.to_bits() && a.per_byte.to_bits() == b.per_byte.to_bits()
        });
        v
    };
    let os = sections("send_overhead", &|s| q(s).send_overhead)?;
    let or = sections("recv_overhead", &|s| q(s).recv_overhead)?;
    let ois = sections("send_interval", &|s| q(s).send_interval)?;
    // the wire time per section: a_k + c_k s, clamped to non-negative parts
    let wire = |s: u64| {
        let t = q(s);
        t.p2p - t.send_overhead - t.recv_overhead
    };
    let mut lines = Vec::with_capacity(ends.len());
    for &(above, lo, hi) in &ends {
        let (a, c) = line(wire, lo, hi);
        let (a, c) = (finite("p2p", a)?.max(0.0), finite("p2p", c)?.max(0.0));
        lines.push((above, a, c));
    }
    let latency = lines
        .iter()
        .map(|l| l.1)
        .filter(|&a| a > 0.0)
        .min_by(f64::total_cmp)
        .unwrap_or(0.0);
    let section_bw = |c: f64| {
        if c > 0.0 {
            (1.0 / c).min(MAX_BANDWIDTH)
        } else {
            MAX_BANDWIDTH
        }
    };
    let bandwidth = lines
        .iter()
        .map(|l| section_bw(l.2))
        .max_by(f64::total_cmp)
        .unwrap_or(MAX_BANDWIDTH);
    let lat_factor = lines
        .iter()
        .map(|&(above, a, _)| SmpiFactor {
            above,
            factor: if latency > 0.0 { a / latency } else { 1.0 },
        })
        .collect();
    let bw_factor = lines
        .iter()
        .map(|&(above, _, c)| SmpiFactor {
            above,
            factor: section_bw(c) / bandwidth,
        })
        .collect();
    let merge_factors = |mut v: Vec<SmpiFactor>| {
        v.dedup_by(|b, a| a.factor.to_bits() == b.factor.to_bits());
        v
    };
    let mut config = SmpiConfig {
        os: merge(os),
        or: merge(or),
        ois: merge(ois),
        latency,
        bandwidth,
        lat_factor: merge_factors(lat_factor),
        bw_factor: merge_factors(bw_factor),
        detached_below: DETACHED_BELOW,
        max_relative_error: 0.0,
    };
    let mut worst = 0.0f64;
    for &(_, lo, hi) in &ends {
        for s in [lo, hi] {
            let want = model.p2p(&Message::contiguous(s));
            let got = config.p2p_at(s);
            if want > 0.0 {
                worst = worst.max((got - want).abs() / want);
            }
        }
    }
    config.max_relative_error = finite("p2p", worst)?;
    Ok(config)
}

/// SMPI's lookup of a `size:offset:per-byte` list: the section with the largest `above` below
/// `size`, else the first one.
fn section_at(sections: &[SmpiSection], size: u64) -> f64 {
    let i = sections
        .partition_point(|x| x.above < size)
        .saturating_sub(1);
    sections
        .get(i)
        .map_or(0.0, |x| x.offset + x.per_byte * size as f64)
}

/// SMPI's lookup of a `size:factor` list: the section with the largest `above` below `size`
/// (1 when there is none).
fn factor_at(factors: &[SmpiFactor], size: u64) -> f64 {
    factors
        .iter()
        .rev()
        .find(|f| f.above < size)
        .map_or(1.0, |f| f.factor)
}

fn list(sections: &[SmpiSection]) -> String {
    sections
        .iter()
        .map(|s| format!("{}:{:e}:{:e}", s.above, s.offset, s.per_byte))
        .collect::<Vec<_>>()
        .join(";")
}

fn factors(factors: &[SmpiFactor]) -> String {
    // SMPI's documentation lists the factors from the largest size down
    factors
        .iter()
        .rev()
        .map(|f| format!("{}:{:e}", f.above, f.factor))
        .collect::<Vec<_>>()
        .join(";")
}

impl SmpiConfig {
    /// `smpi/os` at `size` bytes, as SMPI evaluates it.
    pub fn os_at(&self, size: u64) -> f64 {
        section_at(&self.os, size)
    }

    /// `smpi/or` at `size` bytes.
    pub fn or_at(&self, size: u64) -> f64 {
        section_at(&self.or, size)
    }

    /// `smpi/ois` at `size` bytes.
    pub fn ois_at(&self, size: u64) -> f64 {
        section_at(&self.ois, size)
    }

    /// SMPI's uncontended time of a `size`-byte message:
    /// `os(s) + lat_factor(s) λ + s / (bw_factor(s) β) + or(s)`.
    pub fn p2p_at(&self, size: u64) -> f64 {
        let bw = factor_at(&self.bw_factor, size) * self.bandwidth;
        let transfer = if bw > 0.0 { size as f64 / bw } else { 0.0 };
        self.os_at(size)
            + factor_at(&self.lat_factor, size) * self.latency
            + transfer
            + self.or_at(size)
    }

    /// The configuration items as `(name, value)`, in the order written.
    pub fn items(&self) -> Vec<(&'static str, String)> {
        let mut items = vec![
            ("network/model", "SMPI".to_string()),
            ("smpi/os", list(&self.os)),
            ("smpi/or", list(&self.or)),
            ("smpi/ois", list(&self.ois)),
            ("smpi/lat-factor", factors(&self.lat_factor)),
            ("smpi/bw-factor", factors(&self.bw_factor)),
        ];
        items.push((
            "smpi/send-is-detached-thresh",
            self.detached_below.to_string(),
        ));
        items
    }

    /// The items as `smpirun` flags, one per line: `--cfg=smpi/os:0:1e-6:0;…`.
    pub fn cfg_flags(&self) -> String {
        self.items()
            .into_iter()
            .map(|(k, v)| format!("--cfg={k}:{v}\n"))
            .collect()
    }

    /// A SimGrid platform file (version 4.1): the configuration items in `<config>` and a
    /// cluster of `hosts` hosts (at least 2) whose routes have latency `λ` and bandwidth `β` —
    /// a route crosses the source's and the destination's private link, each of latency
    /// `λ / 2` — with no backbone. Use it as `smpirun -platform FILE -np P …`.
    pub fn platform_xml(&self, hosts: u64) -> String {
        let hosts = hosts.max(2);
        let mut x = String::new();
        x.push_str("<?xml version='1.0'?>\n");
        x.push_str("<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n");
        x.push_str("<!-- written by commcost export simgrid: every message costs os(s) + lat-factor(s) lat\n");
        x.push_str("     + s / (bw-factor(s) bw) + or(s) without contention (SimGrid's SMPI network model) -->\n");
        let _ = writeln!(
            x,
            "<!-- uncontended times match the model within {:.3e} (relative) at the section ends -->",
            self.max_relative_error
        );
        x.push_str("<platform version=\"4.1\">\n  <config>\n");
        for (k, v) in self.items() {
            let _ = writeln!(x, "    <prop id=\"{k}\" value=\"{v}\"/>");
        }
        x.push_str("  </config>\n");
        let _ = writeln!(
            x,
            "  <cluster id=\"commcost\" prefix=\"node-\" suffix=\"\" radical=\"0-{}\" speed=\"1Gf\" bw=\"{:e}Bps\" lat=\"{:e}s\"/>",
            hosts - 1,
            self.bandwidth,
            self.latency / 2.0
        );
        x.push_str("</platform>\n");
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smpi_lookup_follows_the_documented_example() {
        // SimGrid's documentation: with `smpi/os=1:3:2;10:5:1` a message of 11 bytes costs
        // 5 + 11 * 1 (the section whose first value is the largest below the size)
        let s = [
            SmpiSection {
                above: 1,
                offset: 3.0,
                per_byte: 2.0,
            },
            SmpiSection {
                above: 10,
                offset: 5.0,
                per_byte: 1.0,
            },
        ];
        let close = |x: f64, y: f64| (x - y).abs() < 1e-12;
        assert!(close(section_at(&s, 11), 16.0));
        // 10 is not greater than 10: the first section, 3 + 10 * 2
        assert!(close(section_at(&s, 10), 23.0));
        assert!(close(section_at(&s, 0), 3.0));
        // the default bw-factor's last two sections, looked up as SimGrid's FactorSet does:
        // sizes above 65472 get 0.940694, 65472 itself the section before; 0 the default 1
        let f = [
            SmpiFactor {
                above: 0,
                factor: 0.812084,
            },
            SmpiFactor {
                above: 65472,
                factor: 0.940694,
            },
        ];
        assert!(close(factor_at(&f, 65473), 0.940694));
        assert!(close(factor_at(&f, 65472), 0.812084));
        assert!(close(factor_at(&f, 0), 1.0));
    }
}
