//! Golden values: LogGP predictions of the four transports of Table 2 of Hoefler, Lichei & Rehm,
//! "Low-overhead LogGP parameter assessment for modern interconnection networks" (IPDPS 2007),
//! computed by hand from the table, in µs. The table's `L` is the measured end-to-end time of a
//! 1-byte message, `PRTT(1, 0, 1) / 2` (§3.4 of the paper), so `T(1) = L` and
//! `T(s) = L + (s - 1) G`; the send interval is `max(o, g + (s - 1) G)` (eq. (2)), with `o`
//! the table's `o(1)` or `L / 2` where `2 o(1) > L` (NMPI/SCI, Open MPI/openib: the overhead
//! overlaps the wire time).

use crate::common;

use commcost::{CommModel, Message, presets};
use common::{HAND_RELATIVE, US, assert_rel};

fn p2p_us(model: &dyn CommModel, bytes: u64) -> f64 {
    model.p2p(&Message::contiguous(bytes)) / US
}

fn interval_us(model: &dyn CommModel, bytes: u64) -> f64 {
    model.send_interval(&Message::contiguous(bytes)) / US
}

#[test]
fn mpich2_tcp_single_protocol() {
    let m = presets::mpich2_tcp();
    // T(1) = L = 45.74 (Table 2's end-to-end latency)
    assert_rel(p2p_us(&m, 1), 45.74, HAND_RELATIVE);
    // 45.74 + 1023 * 0.00849 = 45.74 + 8.68527 = 54.42527
    assert_rel(p2p_us(&m, 1024), 54.42527, HAND_RELATIVE);
    // 45.74 + 12287 * 0.00849 = 45.74 + 104.31663 = 150.05663
    assert_rel(p2p_us(&m, 12288), 150.05663, HAND_RELATIVE);
    // one more byte: + 0.00849 = 150.06512 (no switch on TCP)
    assert_rel(p2p_us(&m, 12289), 150.06512, HAND_RELATIVE);
    // 45.74 + 65535 * 0.00849 = 45.74 + 556.39215 = 602.13215
    assert_rel(p2p_us(&m, 65536), 602.13215, HAND_RELATIVE);
    assert_eq!(m.switch_points().count(), 0);
}

#[test]
fn nmpi_sci_gets_faster_at_the_switch() {
    let m = presets::nmpi_sci();
    // T(1) = L = 5.48
    assert_rel(p2p_us(&m, 1), 5.48, HAND_RELATIVE);
    // 5.48 + 1023 * 0.0045 = 5.48 + 4.6035 = 10.0835
    assert_rel(p2p_us(&m, 1024), 10.0835, HAND_RELATIVE);
    // 5.48 + 12287 * 0.0045 = 5.48 + 55.2915 = 60.7715
    assert_rel(p2p_us(&m, 12288), 60.7715, HAND_RELATIVE);
    // second range, G = 0.0037: 5.48 + 12288 * 0.0037 = 5.48 + 45.4656 = 50.9456
    assert_rel(p2p_us(&m, 12289), 50.9456, HAND_RELATIVE);
    // 5.48 + 65535 * 0.0037 = 5.48 + 242.4795 = 247.9595
    assert_rel(p2p_us(&m, 65536), 247.9595, HAND_RELATIVE);
    // interval jumps down too: max(2.74, 7.78 + 12287 * 0.0045) = 63.0715,
    // then max(2.74, 13.34 + 12288 * 0.0037) = 58.8056
    assert_rel(interval_us(&m, 12288), 63.0715, HAND_RELATIVE);
    assert_rel(interval_us(&m, 12289), 58.8056, HAND_RELATIVE);
}

#[test]
fn open_mpi_openib_jumps_at_12289() {
    let m = presets::open_mpi_openib();
    // T(1) = L = 5.96
    assert_rel(p2p_us(&m, 1), 5.96, HAND_RELATIVE);
    // 5.96 + 1023 * 0.00073 = 5.96 + 0.74679 = 6.70679
    assert_rel(p2p_us(&m, 1024), 6.70679, HAND_RELATIVE);
    // 5.96 + 12287 * 0.00073 = 5.96 + 8.96951 = 14.92951
    assert_rel(p2p_us(&m, 12288), 14.92951, HAND_RELATIVE);
    // second range, G = 0.00103: 5.96 + 12288 * 0.00103 = 5.96 + 12.65664 = 18.61664
    assert_rel(p2p_us(&m, 12289), 18.61664, HAND_RELATIVE);
    // 5.96 + 65535 * 0.00103 = 5.96 + 67.50105 = 73.46105
    assert_rel(p2p_us(&m, 65536), 73.46105, HAND_RELATIVE);
    // gap: 5.14 + 12287 * 0.00073 = 14.10951; 21.39 + 12288 * 0.00103 = 34.04664
    assert_rel(interval_us(&m, 12288), 14.10951, HAND_RELATIVE);
    assert_rel(interval_us(&m, 12289), 34.04664, HAND_RELATIVE);
    // small messages are overhead-bound? max(2.98, 5.14) = 5.14: no, gap-bound
    assert_rel(interval_us(&m, 1), 5.14, HAND_RELATIVE);
    assert_eq!(m.switch_points().collect::<Vec<_>>(), vec![12289]);
}

#[test]
fn open_mpi_gm_switches_at_32769() {
    let m = presets::open_mpi_gm();
    // T(1) = L = 10.53
    assert_rel(p2p_us(&m, 1), 10.53, HAND_RELATIVE);
    // 10.53 + 1023 * 0.0092 = 10.53 + 9.4116 = 19.9416
    assert_rel(p2p_us(&m, 1024), 19.9416, HAND_RELATIVE);
    // 10.53 + 12287 * 0.0092 = 10.53 + 113.0404 = 123.5704
    assert_rel(p2p_us(&m, 12288), 123.5704, HAND_RELATIVE);
    // still the first range at 12289: 10.53 + 12288 * 0.0092 = 123.5796
    assert_rel(p2p_us(&m, 12289), 123.5796, HAND_RELATIVE);
    // 10.53 + 32767 * 0.0092 = 10.53 + 301.4564 = 311.9864
    assert_rel(p2p_us(&m, 32768), 311.9864, HAND_RELATIVE);
    // second range, G = 0.0042: 10.53 + 32768 * 0.0042 = 10.53 + 137.6256 = 148.1556
    assert_rel(p2p_us(&m, 32769), 148.1556, HAND_RELATIVE);
    // 10.53 + 65535 * 0.0042 = 10.53 + 275.247 = 285.777
    assert_rel(p2p_us(&m, 65536), 285.777, HAND_RELATIVE);
}

#[test]
fn zero_bytes_cost_what_one_byte_costs() {
    for (name, m) in presets::table2_transports() {
        let zero = m.p2p(&Message::contiguous(0));
        let one = m.p2p(&Message::contiguous(1));
        assert_eq!(zero.to_bits(), one.to_bits(), "{name}");
    }
}

/// Table 2's `L` column is each transport's measured `PRTT(1, 0, 1) / 2`: every preset's
/// 1-byte time is within 1 % of it (Hoefler, Lichei, Rehm 2007, Table 2 and §3.4).
#[test]
fn one_byte_time_is_the_table_latency() {
    let table = [
        ("MPICH2/TCP", 45.74),
        ("NMPI/SCI", 5.48),
        ("Open MPI/openib", 5.96),
        ("Open MPI/gm", 10.53),
    ];
    for ((name, m), (table_name, latency)) in presets::table2_transports().into_iter().zip(table) {
        assert_eq!(name, table_name);
        let t = p2p_us(&m, 1);
        assert!(
            (t - latency).abs() <= 0.01 * latency,
            "{name}: {t} vs {latency}"
        );
    }
}
