//! The benchmark fits on real runs (`tests/fixtures/osu/runs/`, `tests/fixtures/imb/runs/`,
//! see their NOTE.md): every range non-negative and every adjustment reported, the model's
//! median relative error on the latency series within 1.2x of the best direct piecewise-linear
//! fit with as many pieces, and Open MPI's TCP eager limit (`btl_tcp_eager_limit` = 65536
//! bytes with the header, `ompi_info --param btl tcp --level 9`) found as a step between 32 KiB
//! and 64 KiB. OSU `vader_5`, `tcp_4`, `tcp_5` and IMB `vader_4`, `tcp_4` are held out: taken
//! after the detection and the fit were settled (the earlier runs, OSU `tcp_3` included, were
//! used to choose the fit's rules).

use std::path::PathBuf;

use commcost::calibrate::{
    BenchmarkFit, BenchmarkFitConfig, BenchmarkSeries, fit_loggp_from_benchmarks,
    fit_plogp_from_benchmarks, parse_imb, parse_osu,
};

fn fixture(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(path)
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(fixture(path)).ok()
}

fn osu(run: &str) -> Option<(BenchmarkSeries, Option<BenchmarkSeries>)> {
    let lat = parse_osu(&read(&format!("osu/runs/osu_latency_{run}.txt"))?).unwrap();
    let bw = read(&format!("osu/runs/osu_bw_{run}.txt")).map(|t| parse_osu(&t).unwrap());
    Some((lat, bw))
}

fn imb(run: &str) -> Option<BenchmarkSeries> {
    let all = parse_imb(&read(&format!("imb/runs/imb_pingpong_{run}.txt"))?).unwrap();
    all.into_iter().find(|s| s.title == "IMB PingPong")
}

/// The bound on the model's median error over the direct fit's: a fit that follows the data.
const BOUND: f64 = 1.2;

fn check(name: &str, fit: &BenchmarkFit) -> Vec<String> {
    let mut problems = Vec::new();
    let (model, direct) = (fit.latency_error.0, fit.direct_latency_error.0);
    if model > BOUND * direct + 1e-9 {
        problems.push(format!(
            "{name}: median error {model:.4} above {BOUND}x the direct fit's {direct:.4}"
        ));
    }
    for (k, r) in fit.ranges.iter().enumerate() {
        if !(r.fixed >= 0.0 && r.gap_per_byte >= 0.0 && r.gap >= 0.0) {
            problems.push(format!("{name}: range {k} has a negative parameter: {r:?}"));
        }
        for p in &r.clamped {
            let reported = fit
                .adjustments
                .iter()
                .any(|a| a.range == Some(k) && a.parameter == *p);
            if !reported {
                problems.push(format!("{name}: range {k}: {p} changed but not reported"));
            }
        }
    }
    problems
}

fn has_step(fit: &BenchmarkFit, between: (u64, u64)) -> bool {
    fit.steps.iter().any(|s| s.between == between)
}

const OSU_RUNS: [&str; 11] = [
    "vader_1", "vader_2", "vader_3", "vader_4", "vader_5", "tcp_1", "tcp_2", "tcp_3", "tcp_4",
    "tcp_5", "mpich_1",
];
const IMB_RUNS: [&str; 8] = [
    "vader_1", "vader_2", "vader_3", "vader_4", "tcp_1", "tcp_2", "tcp_3", "tcp_4",
];

#[test]
fn fits_follow_every_real_run() {
    let config = BenchmarkFitConfig::default();
    let mut problems = Vec::new();
    let mut files = 0;
    for run in OSU_RUNS {
        let Some((lat, bw)) = osu(run) else { continue };
        files += 1;
        let fit = fit_loggp_from_benchmarks(&lat, bw.as_ref(), &config).unwrap();
        problems.extend(check(&format!("osu {run}"), &fit));
        // pLogP fits too, and says where g(m) came from
        let plogp = fit_plogp_from_benchmarks(&lat, bw.as_ref(), 2).unwrap();
        assert_eq!(
            plogp.gap_source.name(),
            if bw.is_some() { "bandwidth" } else { "latency" }
        );
    }
    for run in IMB_RUNS {
        let Some(lat) = imb(run) else { continue };
        files += 1;
        let fit = fit_loggp_from_benchmarks(&lat, None, &config).unwrap();
        problems.extend(check(&format!("imb {run}"), &fit));
    }
    assert!(files >= 19, "only {files} runs found");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The TCP eager limit is a step between 32 KiB and 64 KiB in the TCP runs `tcp_1`, `tcp_4`,
/// `tcp_5` (OSU) and `tcp_1`, `tcp_2`, `tcp_4` (IMB). Not in OSU `tcp_2`, whose small-message
/// times scatter by up to 20 % (taken under load: the 2.3x jump is 1.6 standard errors of that
/// noise), nor in OSU `tcp_3`, where the time at 64 KiB (24.2 µs) is no higher than the line
/// through 8 to 32 KiB predicts (25.3 µs): the switch shows as the per-byte time falling from
/// 0.27 to 0.09-0.11 ns/B, and the fit has a slope range from 32769 bytes there; IMB `tcp_3` was taken under heavy load (times scatter by
/// factors of 2 to 10) and has no usable shape.
#[test]
fn the_tcp_eager_limit_is_found_at_its_size() {
    let config = BenchmarkFitConfig::default();
    let mut missing = Vec::new();
    for run in ["tcp_1", "tcp_4", "tcp_5"] {
        let Some((lat, bw)) = osu(run) else { continue };
        let fit = fit_loggp_from_benchmarks(&lat, bw.as_ref(), &config).unwrap();
        if !has_step(&fit, (32768, 65536)) {
            missing.push(format!("osu {run}: {:?}", fit.steps));
        }
    }
    for run in ["tcp_1", "tcp_2", "tcp_4"] {
        let Some(lat) = imb(run) else { continue };
        let fit = fit_loggp_from_benchmarks(&lat, None, &config).unwrap();
        if !has_step(&fit, (32768, 65536)) {
            missing.push(format!("imb {run}: {:?}", fit.steps));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

/// The crate's older fixtures (`tests/fixtures/osu/`, `tests/fixtures/imb/`): the vader eager
/// limit (4096 bytes with the header) is a step between 2 KiB and 4 KiB in both.
#[test]
fn the_vader_eager_limit_is_found_in_the_older_fixtures() {
    let config = BenchmarkFitConfig::default();
    let lat = parse_osu(&read("osu/osu_latency.txt").unwrap()).unwrap();
    let bw = parse_osu(&read("osu/osu_bw.txt").unwrap()).unwrap();
    let fit = fit_loggp_from_benchmarks(&lat, Some(&bw), &config).unwrap();
    assert!(has_step(&fit, (2048, 4096)), "{:?}", fit.steps);
    assert!(
        check("osu fixture", &fit).is_empty(),
        "{:?}",
        check("osu fixture", &fit)
    );
    let imb = parse_imb(&read("imb/imb_mpi1_2ranks.txt").unwrap()).unwrap();
    let pingpong = imb.iter().find(|s| s.title == "IMB PingPong").unwrap();
    let fit = fit_loggp_from_benchmarks(pingpong, None, &config).unwrap();
    assert!(has_step(&fit, (2048, 4096)), "{:?}", fit.steps);
    assert!(check("imb fixture", &fit).is_empty());
}
