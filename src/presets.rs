//! Published parameter sets from the papers, embedded.
//!
//! # Table 2 of Hoefler, Lichei & Rehm (2007)
//!
//! LogGP parameters measured with the PRTT method on four transports (Hoefler, Lichei, Rehm
//! 2007, §3-§4). The paper quotes µs and µs/byte; they are converted to seconds here. `P = 2`
//! (the parameters were measured between two processes).
//!
//! The paper's `L` column is the **end-to-end** time of a 1-byte message, `PRTT(1, 0, 1) / 2`
//! (§3.4), while LogGP's `p2p = 2o + L + (s - 1) G` adds `2o` to its `L`. The presets keep the
//! measured end-to-end time: each row's `L` and `o(1)` go through
//! [`split_end_to_end`](crate::calibrate::split_end_to_end) — `L = L_e2e - 2o` where that is
//! `>= 0`; where the measured `o` exceeds `L_e2e / 2` (NMPI/SCI, Open MPI/openib: the overhead
//! overlaps the wire time) `L = 0` and `o = L_e2e / 2`. So every preset's `p2p(1 B)` is the
//! table's `L`, and the model's parameters are:
//!
//! | transport | model `L` | model `o` | overlap `o(1) - L_e2e / 2` | `p2p(1 B)` = table `L` |
//! |---|---|---|---|---|
//! | MPICH2 / TCP | 38.82 | 3.46 | 0 | 45.74 |
//! | NMPI / SCI | 0 | 2.74 | 3.36 | 5.48 |
//! | Open MPI / openib | 0 | 2.98 | 1.74 | 5.96 |
//! | Open MPI / gm | 7.99 | 1.27 | 0 | 10.53 |
//!
//! The published rows (µs, µs/byte):
//!
//! | transport | size range (bytes) | L | o(1) | g | G |
//! |---|---|---|---|---|---|
//! | MPICH2 / TCP | 1 ≤ s | 45.74 | 3.46 | 0.915 | 0.00849 |
//! | NMPI / SCI | 1 ≤ s < 12289 | 5.48 | 6.10 | 7.78 | 0.0045 |
//! | NMPI / SCI | 12289 ≤ s | 5.48 | 6.10 | 13.34 | 0.0037 |
//! | Open MPI / openib | 1 ≤ s < 12289 | 5.96 | 4.72 | 5.14 | 0.00073 |
//! | Open MPI / openib | 12289 ≤ s | 5.96 | 4.72 | 21.39 | 0.00103 |
//! | Open MPI / gm | 1 ≤ s < 32769 | 10.53 | 1.27 | 9.44 | 0.0092 |
//! | Open MPI / gm | 32769 ≤ s | 10.53 | 1.27 | 52.01 | 0.0042 |
//!
//! T. Hoefler, T. Lichei, W. Rehm, "Low-overhead LogGP parameter assessment for modern
//! interconnection networks", IPDPS 2007, Table 2.

use crate::models::memory_logp::CacheHierarchy;
use crate::models::memory_logp::CacheLevel;
use crate::{Log3P, LogGP, Protocols};

const MICROSECOND: f64 = 1e-6;

/// One Table 2 row: `(first size, L, o(1), g, G)` in bytes and µs.
type Row = (u64, f64, f64, f64, f64);

const MPICH2_TCP: &[Row] = &[(1, 45.74, 3.46, 0.915, 0.00849)];
const NMPI_SCI: &[Row] = &[
    (1, 5.48, 6.10, 7.78, 0.0045),
    (12289, 5.48, 6.10, 13.34, 0.0037),
];
const OPEN_MPI_OPENIB: &[Row] = &[
    (1, 5.96, 4.72, 5.14, 0.00073),
    (12289, 5.96, 4.72, 21.39, 0.00103),
];
const OPEN_MPI_GM: &[Row] = &[
    (1, 10.53, 1.27, 9.44, 0.0092),
    (32769, 10.53, 1.27, 52.01, 0.0042),
];

/// `(L, o)` of LogGP from the table's end-to-end `L` and `o(1)`, µs: the rule of
/// [`split_end_to_end`](crate::calibrate::split_end_to_end) (the constants are finite and
/// non-negative, so it cannot fail; the unit test checks every row).
fn split(end_to_end: f64, overhead: f64) -> (f64, f64) {
    if 2.0 * overhead <= end_to_end {
        (end_to_end - 2.0 * overhead, overhead)
    } else {
        (0.0, end_to_end / 2.0)
    }
}

fn table2(rows: &[Row]) -> Protocols<LogGP> {
    Protocols::from_trusted_starts(
        rows.iter()
            .map(|&(start, l, o, g, big_g)| {
                let (latency, overhead) = split(l, o);
                let model = LogGP::from_trusted(
                    latency * MICROSECOND,
                    overhead * MICROSECOND,
                    g * MICROSECOND,
                    big_g * MICROSECOND,
                    2,
                );
                (start, model)
            })
            .collect(),
    )
}

/// MPICH2 over TCP (Gigabit Ethernet): one protocol for all sizes (Table 2, row 1).
///
/// # Examples
///
/// ```
/// use commcost::{CommModel, Message, presets};
/// let tcp = presets::mpich2_tcp();
/// // 1 byte: the table's end-to-end L = 45.74 µs (model L = 45.74 - 2 · 3.46 = 38.82 µs)
/// assert!((tcp.p2p(&Message::contiguous(1)) - 45.74e-6).abs() < 1e-12);
/// ```
pub fn mpich2_tcp() -> Protocols<LogGP> {
    table2(MPICH2_TCP)
}

/// NMPI over SCI: protocol switch at 12289 bytes (Table 2, rows 2-3).
pub fn nmpi_sci() -> Protocols<LogGP> {
    table2(NMPI_SCI)
}

/// Open MPI over InfiniBand (openib): protocol switch at 12289 bytes (Table 2, rows 4-5), the
/// rendezvous protocol above 12288 bytes ([`CommModel::rendezvous_above`](crate::CommModel::rendezvous_above);
/// the paper, Sec. 5: "a protocol change at approximately 12kb ... due to the rendezvous
/// protocol").
pub fn open_mpi_openib() -> Protocols<LogGP> {
    table2(OPEN_MPI_OPENIB).with_rendezvous_above(12288)
}

/// Open MPI over Myrinet (gm): protocol switch at 32769 bytes (Table 2, rows 6-7).
pub fn open_mpi_gm() -> Protocols<LogGP> {
    table2(OPEN_MPI_GM)
}

/// The published log_3 P point of the Titan cluster (IA-64 + Myrinet; lognp-log3p §4.1):
/// `s = 16 KiB`, `d = 1 KiB`, `o_mw = 29 µs`, `l_mw = 420 µs`, `o_net = 131 µs`, unit stride 8
/// bytes (doubles). A single point: every size and stride gets these constants.
///
/// With `T_mem = 3 µs` it predicts the paper's measured `T00(s, d) = 452 µs` (send to self) and
/// `T01(s, d) = 580 µs` (remote).
///
/// # Examples
///
/// ```
/// use commcost::{CommModel, Message, presets};
/// let titan = presets::titan_log3p();
/// let msg = Message::vector(2048, 8, 1024)?; // 16 KiB of doubles at 1 KiB stride
/// assert!((titan.send_to_self(&msg, 3e-6) - 452e-6).abs() < 1e-12);
/// assert!((titan.p2p(&msg) - 580e-6).abs() < 1e-12);
/// # Ok::<(), commcost::MessageError>(())
/// ```
pub fn titan_log3p() -> Log3P {
    Log3P::trusted_constants(
        29.0 * MICROSECOND,
        420.0 * MICROSECOND,
        131.0 * MICROSECOND,
        16 * 1024,
        1024,
        8,
    )
}

/// The cache hierarchy of the Pentium III Beowulf of memory logP §6: 32-byte lines, 16 KiB L1
/// (misses cost 7 cycles), 256 KiB L2 (misses cost 70 cycles), 933 MHz. Each miss penalty is
/// read as the extra cost of missing that level, as in the paper's
/// `l = T_1 + T_2 ∫_{S_1} p + T_3 ∫_{S_2} p` (so a line beyond L2 costs 7 + 70 cycles).
///
/// For [`CacheHierarchy`]'s approximate `l(s, d)` prediction.
pub fn pentium3_beowulf_caches() -> CacheHierarchy {
    let cycle = 1.0 / 933e6;
    CacheHierarchy::trusted(
        32,
        vec![
            CacheLevel {
                capacity_bytes: 16 * 1024,
                miss_penalty: 7.0 * cycle,
            },
            CacheLevel {
                capacity_bytes: 256 * 1024,
                miss_penalty: 70.0 * cycle,
            },
        ],
    )
}

/// Every Table 2 transport with its name, in the table's order.
pub fn table2_transports() -> [(&'static str, Protocols<LogGP>); 4] {
    [
        ("MPICH2/TCP", mpich2_tcp()),
        ("NMPI/SCI", nmpi_sci()),
        ("Open MPI/openib", open_mpi_openib()),
        ("Open MPI/gm", open_mpi_gm()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::protocol::ProtocolRange;

    /// The presets' split of `L` and `o` is [`crate::calibrate::split_end_to_end`]'s.
    #[test]
    fn presets_split_like_the_calibration() {
        for rows in [MPICH2_TCP, NMPI_SCI, OPEN_MPI_OPENIB, OPEN_MPI_GM] {
            for &(_, l, o, _, _) in rows {
                let checked = crate::calibrate::split_end_to_end(l, o).expect("valid row");
                let (latency, overhead) = split(l, o);
                assert_eq!((checked.latency, checked.overhead), (latency, overhead));
            }
        }
    }

    /// The trusted constructors skip validation; the validating ones must accept the same data.
    #[test]
    fn every_preset_passes_validation() {
        for (name, preset) in table2_transports() {
            let rebuilt: Vec<ProtocolRange<LogGP>> = preset
                .ranges()
                .iter()
                .map(|r| {
                    let m = r.model();
                    let mut model =
                        LogGP::new(m.latency(), m.overhead(), m.gap(), m.gap_per_byte())
                            .unwrap_or_else(|e| panic!("{name}: {e}"));
                    if let Some(processors) = m.processors() {
                        model = model
                            .with_processors(processors)
                            .unwrap_or_else(|e| panic!("{name}: {e}"));
                    }
                    ProtocolRange::new(r.start(), r.end(), model)
                })
                .collect();
            let mut validated = Protocols::new(rebuilt).unwrap_or_else(|e| panic!("{name}: {e}"));
            if let Some(bytes) = crate::CommModel::rendezvous_above(&preset) {
                validated = validated.with_rendezvous_above(bytes);
            }
            assert_eq!(validated, preset, "{name}");
        }
        let titan = titan_log3p();
        let validated = Log3P::new(
            titan.middleware_overhead().clone(),
            titan.middleware_latency().clone(),
            titan.network_overhead().clone(),
            titan.unit_stride(),
        )
        .expect("Titan point is valid");
        assert_eq!(validated, titan);
        let p3 = pentium3_beowulf_caches();
        let validated = CacheHierarchy::new(p3.line_bytes(), p3.levels().to_vec())
            .expect("Pentium III caches are valid");
        assert_eq!(validated, p3);
    }
}
