//! Parameter validation: every constructor rejects bad values with an error naming the field.

use commcost::table::Table1D;
use commcost::table::Table2D;
use commcost::{LogGP, LogP, ParameterError, Pram};

fn field(err: ParameterError) -> &'static str {
    match err {
        ParameterError::OutOfRange { name, .. } | ParameterError::TooSmall { name, .. } => name,
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn negative_nan_and_infinite_times_are_rejected() {
    for bad in [-1e-9, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert_eq!(field(LogP::new(bad, 0.0, 0.0, 8).unwrap_err()), "latency");
        assert_eq!(field(LogP::new(0.0, bad, 0.0, 8).unwrap_err()), "overhead");
        assert_eq!(field(LogP::new(0.0, 0.0, bad, 8).unwrap_err()), "gap");
        assert_eq!(
            field(LogGP::new(bad, 0.0, 0.0, 0.0).unwrap_err()),
            "latency"
        );
        assert_eq!(
            field(LogGP::new(0.0, bad, 0.0, 0.0).unwrap_err()),
            "overhead"
        );
        assert_eq!(field(LogGP::new(0.0, 0.0, bad, 0.0).unwrap_err()), "gap");
        assert_eq!(
            field(LogGP::new(0.0, 0.0, 0.0, bad).unwrap_err()),
            "gap_per_byte"
        );
        assert_eq!(field(Pram::new(bad).unwrap_err()), "unit_cost");
    }
}

#[test]
fn integer_parameters_have_minimums() {
    assert_eq!(
        field(
            LogP::new(0.0, 0.0, 0.0, 8)
                .unwrap()
                .with_processors(0)
                .unwrap_err()
        ),
        "processors"
    );
    assert_eq!(
        field(LogP::new(0.0, 0.0, 0.0, 0).unwrap_err()),
        "word_bytes"
    );
    assert_eq!(
        field(
            LogGP::new(0.0, 0.0, 0.0, 0.0)
                .unwrap()
                .with_processors(0)
                .unwrap_err()
        ),
        "processors"
    );
    // zero times are valid (an ideal network)
    assert!(LogGP::new(0.0, 0.0, 0.0, 0.0).is_ok());
}

#[test]
fn table_errors_locate_the_entry() {
    assert!(matches!(
        Table1D::new(vec![1.0, f64::NAN], vec![1.0, 2.0]),
        Err(ParameterError::NonFiniteEntry { name: "sizes", index: 1, value }) if value.is_nan()
    ));
    assert!(matches!(
        Table1D::new(vec![1.0, 1.0], vec![1.0, 2.0]),
        Err(ParameterError::NotIncreasing {
            name: "sizes",
            index: 1,
            ..
        })
    ));
    assert!(matches!(
        Table1D::new(vec![1.0, 2.0], vec![1.0, f64::INFINITY]),
        Err(ParameterError::NonFiniteEntry {
            name: "values",
            index: 1,
            ..
        })
    ));
    assert!(matches!(
        Table2D::new(
            vec![1.0, 2.0],
            vec![8.0, 16.0],
            vec![vec![0.0, 1.0], vec![2.0, f64::NAN]]
        ),
        Err(ParameterError::NonFiniteEntry {
            name: "values",
            index: 3,
            ..
        })
    ));
    assert!(matches!(
        Table2D::new(vec![1.0], vec![16.0, 8.0], vec![vec![0.0, 1.0]]),
        Err(ParameterError::NotIncreasing {
            name: "strides",
            ..
        })
    ));
    assert!(matches!(
        Table2D::new(vec![1.0, 2.0], vec![8.0], vec![vec![0.0]]),
        Err(ParameterError::LengthMismatch {
            expected: 2,
            got: 1,
            ..
        })
    ));
}
