//! Order statistics shared by the probes and the fits.

/// The median of `values` (sorted in place by [`f64::total_cmp`]); the mean of the two middle
/// values for an even count. `values` must not be empty.
pub(crate) fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}
