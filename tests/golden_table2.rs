//! Golden values: LogGP predictions of the four transports of Table 2 of Hoefler, Lichei & Rehm
//! (IPDPS 2007), computed by hand from the table with `T(s) = 2o + L + (s - 1) G` and
//! `interval(s) = max(o, g + (s - 1) G)` (SPEC §2), in µs.

mod common;

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
    // 2o + L = 2 * 3.46 + 45.74 = 52.66
    assert_rel(p2p_us(&m, 1), 52.66, HAND_RELATIVE);
    // 52.66 + 1023 * 0.00849 = 52.66 + 8.68527 = 61.34527
    assert_rel(p2p_us(&m, 1024), 61.34527, HAND_RELATIVE);
    // 52.66 + 12287 * 0.00849 = 52.66 + 104.31663 = 156.97663
    assert_rel(p2p_us(&m, 12288), 156.97663, HAND_RELATIVE);
    // one more byte: + 0.00849 = 156.98512 (no switch on TCP)
    assert_rel(p2p_us(&m, 12289), 156.98512, HAND_RELATIVE);
    // 52.66 + 65535 * 0.00849 = 52.66 + 556.39215 = 609.05215
    assert_rel(p2p_us(&m, 65536), 609.05215, HAND_RELATIVE);
    assert_eq!(m.switch_points().count(), 0);
}

#[test]
fn nmpi_sci_gets_faster_at_the_switch() {
    let m = presets::nmpi_sci();
    // 2 * 6.10 + 5.48 = 17.68
    assert_rel(p2p_us(&m, 1), 17.68, HAND_RELATIVE);
    // 17.68 + 1023 * 0.0045 = 17.68 + 4.6035 = 22.2835
    assert_rel(p2p_us(&m, 1024), 22.2835, HAND_RELATIVE);
    // 17.68 + 12287 * 0.0045 = 17.68 + 55.2915 = 72.9715
    assert_rel(p2p_us(&m, 12288), 72.9715, HAND_RELATIVE);
    // second range, G = 0.0037: 17.68 + 12288 * 0.0037 = 17.68 + 45.4656 = 63.1456
    assert_rel(p2p_us(&m, 12289), 63.1456, HAND_RELATIVE);
    // 17.68 + 65535 * 0.0037 = 17.68 + 242.4795 = 260.1595
    assert_rel(p2p_us(&m, 65536), 260.1595, HAND_RELATIVE);
    // interval jumps down too: max(6.10, 7.78 + 12287 * 0.0045) = 63.0715,
    // then max(6.10, 13.34 + 12288 * 0.0037) = 58.8056
    assert_rel(interval_us(&m, 12288), 63.0715, HAND_RELATIVE);
    assert_rel(interval_us(&m, 12289), 58.8056, HAND_RELATIVE);
}

#[test]
fn open_mpi_openib_jumps_at_12289() {
    let m = presets::open_mpi_openib();
    // 2 * 4.72 + 5.96 = 15.4
    assert_rel(p2p_us(&m, 1), 15.4, HAND_RELATIVE);
    // 15.4 + 1023 * 0.00073 = 15.4 + 0.74679 = 16.14679
    assert_rel(p2p_us(&m, 1024), 16.14679, HAND_RELATIVE);
    // 15.4 + 12287 * 0.00073 = 15.4 + 8.96951 = 24.36951
    assert_rel(p2p_us(&m, 12288), 24.36951, HAND_RELATIVE);
    // second range, G = 0.00103: 15.4 + 12288 * 0.00103 = 15.4 + 12.65664 = 28.05664
    assert_rel(p2p_us(&m, 12289), 28.05664, HAND_RELATIVE);
    // 15.4 + 65535 * 0.00103 = 15.4 + 67.50105 = 82.90105
    assert_rel(p2p_us(&m, 65536), 82.90105, HAND_RELATIVE);
    // gap: 5.14 + 12287 * 0.00073 = 14.10951; 21.39 + 12288 * 0.00103 = 34.04664
    assert_rel(interval_us(&m, 12288), 14.10951, HAND_RELATIVE);
    assert_rel(interval_us(&m, 12289), 34.04664, HAND_RELATIVE);
    // small messages are overhead-bound? max(4.72, 5.14) = 5.14: no, gap-bound
    assert_rel(interval_us(&m, 1), 5.14, HAND_RELATIVE);
    assert_eq!(m.switch_points().collect::<Vec<_>>(), vec![12289]);
}

#[test]
fn open_mpi_gm_switches_at_32769() {
    let m = presets::open_mpi_gm();
    // 2 * 1.27 + 10.53 = 13.07
    assert_rel(p2p_us(&m, 1), 13.07, HAND_RELATIVE);
    // 13.07 + 1023 * 0.0092 = 13.07 + 9.4116 = 22.4816
    assert_rel(p2p_us(&m, 1024), 22.4816, HAND_RELATIVE);
    // 13.07 + 12287 * 0.0092 = 13.07 + 113.0404 = 126.1104
    assert_rel(p2p_us(&m, 12288), 126.1104, HAND_RELATIVE);
    // still the first range at 12289: 13.07 + 12288 * 0.0092 = 126.1196
    assert_rel(p2p_us(&m, 12289), 126.1196, HAND_RELATIVE);
    // 13.07 + 32767 * 0.0092 = 13.07 + 301.4564 = 314.5264
    assert_rel(p2p_us(&m, 32768), 314.5264, HAND_RELATIVE);
    // second range, G = 0.0042: 13.07 + 32768 * 0.0042 = 13.07 + 137.6256 = 150.6956
    assert_rel(p2p_us(&m, 32769), 150.6956, HAND_RELATIVE);
    // 13.07 + 65535 * 0.0042 = 13.07 + 275.247 = 288.317
    assert_rel(p2p_us(&m, 65536), 288.317, HAND_RELATIVE);
}

#[test]
fn zero_bytes_cost_what_one_byte_costs() {
    for (name, m) in presets::table2_transports() {
        let zero = m.p2p(&Message::contiguous(0));
        let one = m.p2p(&Message::contiguous(1));
        assert_eq!(zero.to_bits(), one.to_bits(), "{name}");
    }
}
