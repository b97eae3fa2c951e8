//! `commcost::simgrid`: the `smpi/os`, `smpi/or` and `smpi/ois` sections, read back from the
//! `--cfg=` text with SMPI's documented lookup (SimGrid `docs/source/Configuring_SimGrid.rst`,
//! section `smpi/os`: the section whose first value is the largest one below the message size,
//! else the first section), reproduce the model's `o_s(m)`, `o_r(m)` and send interval at every
//! breakpoint: both ends of every section.

use commcost::simgrid::{SmpiOptions, smpi_config};
use commcost::table::Table1D;
use commcost::{CommModel, LogGP, LogP, Message, PLogP, Pram, presets};

/// `size:offset:per-byte;…` as written after `--cfg=NAME:`.
fn sections(cfg: &str, name: &str) -> Vec<(u64, f64, f64)> {
    let prefix = format!("--cfg={name}:");
    let line = cfg
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no {name} in\n{cfg}"));
    let mut out: Vec<(u64, f64, f64)> = line
        .split(';')
        .map(|s| {
            let v: Vec<&str> = s.split(':').collect();
            assert_eq!(v.len(), 3, "{s}");
            (
                v[0].parse().unwrap(),
                v[1].parse().unwrap(),
                v[2].parse().unwrap(),
            )
        })
        .collect();
    // "the order of sections can be arbitrary; they will be ordered internally"
    out.sort_by_key(|s| s.0);
    out
}

/// SMPI's rule for a message of `size` bytes.
fn smpi_value(sections: &[(u64, f64, f64)], size: u64) -> f64 {
    let mut current = sections[0].1 + sections[0].2 * size as f64;
    for &(above, offset, per_byte) in sections {
        if size <= above {
            return current;
        }
        current = offset + per_byte * size as f64;
    }
    current
}

/// The breakpoints: 1, the powers of two up to `max`, and for every protocol switch at `s`,
/// `s - 1` and `s`.
fn breakpoints(model: &dyn CommModel, max: u64) -> Vec<u64> {
    let mut b: Vec<u64> = (0..64)
        .map(|k| 1u64 << k)
        .take_while(|&p| p <= max)
        .collect();
    for s in model.size_breakpoints() {
        if s <= max {
            b.extend([s - 1, s]);
        }
    }
    for p in b.clone() {
        b.push(p + 1);
    }
    b.retain(|&s| s >= 1);
    b.sort_unstable();
    b.dedup();
    b
}

fn check(name: &str, model: &dyn CommModel, max: u64) {
    let config = smpi_config(model, &SmpiOptions { max_bytes: max }).expect("export");
    let cfg = config.cfg_flags();
    let (os, or, ois) = (
        sections(&cfg, "smpi/os"),
        sections(&cfg, "smpi/or"),
        sections(&cfg, "smpi/ois"),
    );
    for s in breakpoints(model, max) {
        let q = model.quantities(&Message::contiguous(s));
        for (what, list, want) in [
            ("os", &os, q.send_overhead),
            ("or", &or, q.recv_overhead),
            ("ois", &ois, q.send_interval),
        ] {
            let got = smpi_value(list, s);
            let tolerance = 1e-12 * want.abs().max(1e-9);
            assert!(
                (got - want).abs() <= tolerance,
                "{name}: {what}({s}) = {got:e} from the SMPI sections, the model says {want:e}"
            );
        }
    }
}

fn plogp() -> PLogP {
    let sizes = vec![1.0, 1024.0, 65536.0];
    let t = |v: [f64; 3]| Table1D::new(sizes.clone(), v.to_vec()).unwrap();
    PLogP::new(
        3e-6,
        t([1e-6, 2e-6, 30e-6]),
        t([1.5e-6, 2.5e-6, 25e-6]),
        t([2e-6, 4e-6, 50e-6]),
        2,
    )
    .unwrap()
}

#[test]
fn os_or_ois_sections_reproduce_the_model_at_every_breakpoint() {
    for (name, model) in presets::table2_transports() {
        check(name, &model, 1 << 30);
    }
    check("titan log3p", &presets::titan_log3p(), 1 << 24);
    check("pLogP", &plogp(), 1 << 20);
    check(
        "LogGP",
        &LogGP::new(5e-6, 1e-6, 2e-6, 1e-9).unwrap(),
        1 << 30,
    );
    check("LogP", &LogP::new(5e-6, 1e-6, 2e-6, 8).unwrap(), 1 << 16);
    check("PRAM", &Pram::new(1e-6).unwrap(), 4);
}

#[test]
fn network_terms_reproduce_loggp_end_to_end() {
    // LogGP with L > G: the wire time L + (s - 1) G is one line with a positive intercept, so
    // os + λ + s/β + or is the model's 2o + L + (s - 1) G exactly (up to rounding)
    let model = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9).unwrap();
    let config = smpi_config(&model, &SmpiOptions::default()).unwrap();
    assert!(
        config.max_relative_error < 1e-9,
        "{}",
        config.max_relative_error
    );
    // λ = L - G, β = 1 / G: 5 µs - 1 ns and 1 GB/s
    assert!(
        (config.latency - (5e-6 - 1e-9)).abs() < 1e-14,
        "{}",
        config.latency
    );
    assert!((config.bandwidth - 1e9).abs() < 1e-3);
    // the protocol presets: a new range starts a section; within 0.1 % end to end
    for (name, model) in presets::table2_transports() {
        let c = smpi_config(&model, &SmpiOptions::default()).unwrap();
        assert!(
            c.max_relative_error < 1e-3,
            "{name}: {}",
            c.max_relative_error
        );
        // every send detached: SimGrid injects os and or only into detached sends
        assert!(
            c.cfg_flags()
                .contains("--cfg=smpi/send-is-detached-thresh:2147483647\n")
        );
    }
}

#[test]
fn platform_file_names_every_item_and_the_cluster() {
    let config = smpi_config(&presets::open_mpi_openib(), &SmpiOptions::default()).unwrap();
    let xml = config.platform_xml(8);
    for item in [
        "network/model",
        "smpi/os",
        "smpi/or",
        "smpi/ois",
        "smpi/lat-factor",
        "smpi/bw-factor",
    ] {
        assert!(
            xml.contains(&format!("<prop id=\"{item}\" value=\"")),
            "{item}"
        );
    }
    assert!(xml.contains("radical=\"0-7\""));
    assert!(!xml.contains("NaN") && !xml.contains("inf"));
}

#[test]
fn hostile_options_are_errors() {
    let model = presets::open_mpi_openib();
    for max_bytes in [0, 1] {
        let e = smpi_config(&model, &SmpiOptions { max_bytes }).unwrap_err();
        assert!(e.to_string().contains("max_bytes"), "{e}");
    }
    // the largest size: the last section ends at 2^63, no overflow
    let c = smpi_config(
        &model,
        &SmpiOptions {
            max_bytes: u64::MAX,
        },
    )
    .unwrap();
    assert!(c.os_at(u64::MAX).is_finite() && c.p2p_at(u64::MAX).is_finite());
}
