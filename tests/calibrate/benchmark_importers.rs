//! The OSU Micro-Benchmarks and Intel MPI Benchmarks importers on real output committed under
//! `tests/fixtures/` (see the NOTE.md files there), and the LogGP fit from them.

use approx::{assert_abs_diff_eq, assert_relative_eq};
use commcost::calibrate::CalibrationError;
use commcost::calibrate::{
    BenchmarkFitConfig, BenchmarkPoint, BenchmarkSeries, SeriesKind, fit_loggp_from_benchmarks,
    parse_imb, parse_osu,
};
use commcost::{CommModel, Message};

fn fixture(path: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/fixtures/{path}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("fixture present")
}

#[test]
fn osu_latency_table_is_read_in_seconds() {
    let s = parse_osu(&fixture("osu/osu_latency.txt")).unwrap();
    assert_eq!(s.title, "OSU MPI Latency Test v5.3");
    assert_eq!(s.kind, SeriesKind::Latency);
    assert_eq!(s.points.len(), 24); // 0 and 2^0 .. 2^22, as printed
    assert_eq!(s.points[0].bytes, 0);
    assert_relative_eq!(s.points[0].value, 0.13e-6);
    assert_eq!(s.points[23].bytes, 4_194_304);
    assert_relative_eq!(s.points[23].value, 528.75e-6);
    assert!(
        s.points
            .iter()
            .all(|p| p.min.is_none() && p.repetitions.is_none())
    );
}

#[test]
fn osu_bandwidths_are_bytes_per_second() {
    let bw = parse_osu(&fixture("osu/osu_bw.txt")).unwrap();
    assert_eq!(bw.kind, SeriesKind::Bandwidth);
    assert_eq!((bw.points[0].bytes, bw.points.len()), (1, 23));
    assert_relative_eq!(bw.points[0].value, 14.77e6);
    // 1 byte at 14.77 MB/s: one message every 1 / 14.77 µs
    assert_relative_eq!(bw.seconds_per_message()[0].1, 1.0 / 14.77e6);
    let bibw = parse_osu(&fixture("osu/osu_bibw.txt")).unwrap();
    assert_eq!(bibw.kind, SeriesKind::BidirectionalBandwidth);
    assert_relative_eq!(bibw.points[22].value, 21425.09e6);
}

#[test]
fn osu_collectives_with_and_without_full_statistics() {
    let bcast = parse_osu(&fixture("osu/osu_bcast.txt")).unwrap();
    assert_eq!(bcast.kind, SeriesKind::Collective("broadcast".into()));
    assert_eq!(bcast.points.len(), 17);
    let plain = parse_osu(&fixture("osu/osu_allreduce.txt")).unwrap();
    let full = parse_osu(&fixture("osu/osu_allreduce_full.txt")).unwrap();
    assert_eq!(full.kind, SeriesKind::Collective("allreduce".into()));
    assert_eq!(plain.points.len(), full.points.len());
    let last = full.points[14];
    assert_eq!((last.bytes, last.repetitions), (65536, Some(100)));
    assert_relative_eq!(last.value, 24.89e-6);
    assert_relative_eq!(last.min.unwrap(), 24.84e-6);
    assert_relative_eq!(last.max.unwrap(), 24.93e-6);
    assert!(plain.points.iter().all(|p| p.min.is_none()));
}

#[test]
fn osu_newer_headers_and_tail_columns() {
    // version 7 layout: datatype line, percentile columns (read past)
    let out = "# OSU MPI Latency Test v7.4\n# Datatype: MPI_CHAR.\n\
               # Size          Latency (us)        P50 Tail Lat(us)\n\
               1                       1.25                    1.20\n";
    let s = parse_osu(out).unwrap();
    assert_eq!(s.kind, SeriesKind::Latency);
    assert_relative_eq!(s.points[0].value, 1.25e-6);
}

#[test]
fn osu_errors_name_the_line() {
    let bad = "# OSU MPI Latency Test v5.3\n# Size          Latency (us)\n1 0.15\n2 abc\n";
    assert_eq!(
        parse_osu(bad),
        Err(CalibrationError::Parse {
            line: 4,
            message: "`abc` is not a number".into()
        })
    );
    let short = "# OSU MPI Latency Test v5.3\n# Size          Latency (us)\n1 0.15 7\n";
    assert!(matches!(
        parse_osu(short),
        Err(CalibrationError::Parse { line: 3, .. })
    ));
    let negative = "# Size          Latency (us)\n1 -0.15\n";
    assert!(matches!(
        parse_osu(negative),
        Err(CalibrationError::Parse { line: 2, .. })
    ));
    assert!(matches!(
        parse_osu("no table here\n"),
        Err(CalibrationError::TooFew { .. })
    ));
    assert!(matches!(
        parse_osu(""),
        Err(CalibrationError::TooFew { .. })
    ));
}

#[test]
fn imb_tables_one_series_per_benchmark() {
    let all = parse_imb(&fixture("imb/imb_mpi1_2ranks.txt")).unwrap();
    let kinds: Vec<&SeriesKind> = all.iter().map(|s| &s.kind).collect();
    assert_eq!(
        kinds,
        [
            &SeriesKind::Latency,
            &SeriesKind::ExchangeLatency,
            &SeriesKind::Collective("allreduce".into()),
            &SeriesKind::Collective("bcast".into()),
            &SeriesKind::Collective("barrier".into()),
        ]
    );
    assert!(all.iter().all(|s| s.processes == Some(2)));
    let ping = &all[0];
    assert_eq!(ping.points.len(), 22);
    assert_eq!(
        (ping.points[21].bytes, ping.points[21].repetitions),
        (1_048_576, Some(40))
    );
    assert_relative_eq!(ping.points[21].value, 91.48e-6);
    let allreduce = &all[2].points[19];
    assert_relative_eq!(allreduce.min.unwrap(), 176.88e-6);
    assert_relative_eq!(allreduce.max.unwrap(), 177.00e-6);
    assert_relative_eq!(allreduce.value, 176.94e-6);
    // the barrier has no size column
    assert_eq!(all[4].points[0].bytes, 0);
    assert_relative_eq!(all[4].points[0].value, 0.19e-6);
}

#[test]
fn imb_new_process_count_starts_a_new_series_and_errors_name_the_line() {
    let out = "# Benchmarking Allreduce\n# #processes = 2\n\
               #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n\
               4 1000 1.0 2.0 1.5\n\
               # Benchmarking Allreduce\n# #processes = 4\n\
               #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n\
               4 1000 2.0 3.0 2.5\n";
    let all = parse_imb(out).unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!((all[0].processes, all[1].processes), (Some(2), Some(4)));
    let bad = out.replace("2.0 3.0 2.5", "2.0 3.0");
    assert!(matches!(
        parse_imb(&bad),
        Err(CalibrationError::Parse { line: 8, .. })
    ));
    assert!(matches!(
        parse_imb("nothing"),
        Err(CalibrationError::TooFew { .. })
    ));
}

fn series(kind: SeriesKind, points: &[(u64, f64)]) -> BenchmarkSeries {
    BenchmarkSeries {
        title: "hand-made".into(),
        kind,
        processes: None,
        points: points
            .iter()
            .map(|&(bytes, value)| BenchmarkPoint {
                bytes,
                value,
                min: None,
                max: None,
                repetitions: None,
            })
            .collect(),
    }
}

/// Exact LogGP data with a protocol switch: the fit recovers the parameters it was made from
/// (hand-chosen: eager 2 µs + 0.5 ns/B, g = 1 µs; rendezvous 10 µs + 0.25 ns/B, g = 4 µs).
#[test]
fn fit_recovers_exact_two_protocol_data() {
    let sizes: Vec<u64> = (0..=20).map(|k| 1u64 << k).collect();
    let params = |s: u64| {
        if s <= 8192 {
            (2e-6, 0.5e-9, 1e-6)
        } else {
            (10e-6, 0.25e-9, 4e-6)
        }
    };
    let lat: Vec<(u64, f64)> = sizes
        .iter()
        .map(|&s| {
            let (f, b, _) = params(s);
            (s, f + (s - 1) as f64 * b)
        })
        .collect();
    let bw: Vec<(u64, f64)> = sizes
        .iter()
        .map(|&s| {
            let (_, b, g) = params(s);
            (s, s as f64 / (g + (s - 1) as f64 * b))
        })
        .collect();
    let fit = fit_loggp_from_benchmarks(
        &series(SeriesKind::Latency, &lat),
        Some(&series(SeriesKind::Bandwidth, &bw)),
        &BenchmarkFitConfig::default(),
    )
    .unwrap();
    assert_eq!(fit.ranges.len(), 2, "{:?} {:?}", fit.steps, fit.ranges);
    assert_eq!(fit.ranges[1].start, 8193);
    for (range, (f, b, g)) in fit
        .ranges
        .iter()
        .zip([(2e-6, 0.5e-9, 1e-6), (10e-6, 0.25e-9, 4e-6)])
    {
        assert_relative_eq!(range.fixed, f, max_relative = 1e-9);
        assert_relative_eq!(range.gap_per_byte, b, max_relative = 1e-9);
        assert_relative_eq!(range.gap, g, max_relative = 1e-9);
    }
    assert!(fit.latency_error.1 < 1e-9);
    assert!(fit.bandwidth_error.unwrap().1 < 1e-9);
}

/// The measured OSU series of this machine: the eager/rendezvous switch lands between 2 KiB and
/// 4 KiB, where Open MPI 4.1's shared-memory transport (`btl_vader_eager_limit` = 4096 bytes,
/// header included) changes protocol; and the model fitted to OSU predicts the independent IMB
/// PingPong run of the same pair of ranks.
#[test]
fn fit_on_measured_osu_output_predicts_imb() {
    let lat = parse_osu(&fixture("osu/osu_latency.txt")).unwrap();
    let bw = parse_osu(&fixture("osu/osu_bw.txt")).unwrap();
    let fit = fit_loggp_from_benchmarks(&lat, Some(&bw), &BenchmarkFitConfig::default()).unwrap();
    assert!(
        fit.ranges
            .iter()
            .any(|r| r.start == 2049 && r.boundary == commcost::calibrate::RangeBoundary::Step),
        "{:?}",
        fit.ranges
    );
    assert!(fit.latency_error.0 < 0.10, "{:?}", fit.latency_error);
    let imb = parse_imb(&fixture("imb/imb_mpi1_2ranks.txt")).unwrap();
    let pairs: Vec<(f64, f64)> = imb[0]
        .points
        .iter()
        .filter(|p| p.bytes > 0)
        .map(|p| (fit.model.p2p(&Message::contiguous(p.bytes)), p.value))
        .collect();
    let (median, _) = commcost::calibrate::relative_errors(&pairs).unwrap();
    assert!(median < 0.12, "median relative error against IMB {median}");
    // the benchmarks cannot separate o from L: the default puts the fixed time in L
    assert_abs_diff_eq!(fit.model.ranges()[0].model().overhead(), 0.0);
}

#[test]
fn fit_rejects_swapped_or_short_series() {
    let lat = series(SeriesKind::Latency, &[(1, 1e-6)]);
    let bw = series(SeriesKind::Bandwidth, &[(1, 1e6), (2, 2e6)]);
    let config = BenchmarkFitConfig::default();
    assert!(matches!(
        fit_loggp_from_benchmarks(&lat, None, &config),
        Err(CalibrationError::TooFew { .. })
    ));
    assert!(fit_loggp_from_benchmarks(&bw, None, &config).is_err());
    let lat2 = series(SeriesKind::Latency, &[(1, 1e-6), (2, 1.1e-6)]);
    assert!(fit_loggp_from_benchmarks(&lat2, Some(&lat2), &config).is_err());
    let share = BenchmarkFitConfig {
        overhead_share: 1.5,
        ..config
    };
    assert!(fit_loggp_from_benchmarks(&lat2, None, &share).is_err());
    let nan = series(SeriesKind::Latency, &[(1, f64::NAN), (2, 1e-6)]);
    assert!(matches!(
        fit_loggp_from_benchmarks(&nan, None, &config),
        Err(CalibrationError::InvalidValue { .. })
    ));
}

mod never_panic {
    use super::*;
    use proptest::prelude::*;

    fn lines_of(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Any text: a result or an error, never a panic.
        #[test]
        fn parsers_take_any_text(text in "(#|[ 0-9a-zA-Z.\\-\\[\\]_/()=]|\n){0,400}") {
            let _ = parse_osu(&text);
            let _ = parse_imb(&text);
        }

        /// The measured files with one line replaced by noise, dropped or duplicated: a result
        /// or an error naming a line inside the file.
        #[test]
        fn damaged_fixtures_fail_cleanly(
            which in 0usize..3,
            line in 0usize..200,
            noise in "[ 0-9a-z.#\\-]{0,40}",
            action in 0u8..3,
        ) {
            let file = ["osu/osu_latency.txt", "osu/osu_allreduce_full.txt", "imb/imb_mpi1_2ranks.txt"][which];
            let mut lines = lines_of(&fixture(file));
            let at = line % lines.len();
            match action {
                0 => lines[at] = noise,
                1 => { lines.remove(at); }
                _ => { let copy = lines[at].clone(); lines.insert(at, copy); }
            }
            let damaged = lines.join("\n");
            let n = lines.len();
            let result = if which == 2 { parse_imb(&damaged).map(|_| ()) } else { parse_osu(&damaged).map(|_| ()) };
            if let Err(CalibrationError::Parse { line, .. }) = result {
                prop_assert!((1..=n).contains(&line));
            }
        }

        /// Any finite or non-finite values and sizes: the fit returns a model or an error.
        #[test]
        fn fit_takes_any_series(
            points in proptest::collection::vec((prop_oneof![0u64..1 << 40, Just(u64::MAX)], -1e-3f64..1e-3), 0..40),
            bw in proptest::collection::vec((0u64..1 << 40, 0f64..1e12), 0..40),
            nan in any::<bool>(),
        ) {
            let mut lat = series(SeriesKind::Latency, &points);
            if nan && !lat.points.is_empty() {
                lat.points[0].value = f64::NAN;
            }
            let bw = series(SeriesKind::Bandwidth, &bw);
            if let Ok(fit) = fit_loggp_from_benchmarks(&lat, Some(&bw), &BenchmarkFitConfig::default()) {
                for range in fit.model.ranges() {
                    let m = range.model();
                    prop_assert!(m.latency() >= 0.0 && m.gap() >= 0.0 && m.gap_per_byte() >= 0.0);
                }
            }
        }
    }
}
