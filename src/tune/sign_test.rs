//! The one-sided sign test of [`tune`](super::tune).

/// The one-sided sign test's p-value: the probability of at least `k` successes in `n`
/// independent trials of probability 1/2, `Σ_{i=k}^{n} C(n, i) / 2^n` (1 for `k = 0`, 0 for
/// `k > n`).
///
/// # Examples
///
/// ```
/// use commcost::tune::sign_test_p;
/// assert_eq!(sign_test_p(5, 5), 1.0 / 32.0);
/// assert_eq!(sign_test_p(6, 5), 7.0 / 64.0);
/// assert_eq!(sign_test_p(3, 0), 1.0);
/// ```
pub fn sign_test_p(n: u32, k: u32) -> f64 {
    if k > n {
        return 0.0;
    }
    // C(n, i) / 2^n term by term from i = n down, in f64 (n <= a few hundred stays exact
    // enough; n above 1074 would underflow 2^-n, so the terms are scaled in steps)
    let n = n.min(1000);
    let k = k.min(n);
    let mut term = 0.5f64.powi(n as i32); // C(n, n) / 2^n
    let mut sum = 0.0;
    let mut i = n;
    loop {
        if i >= k {
            sum += term;
        }
        if i == k || i == 0 {
            break;
        }
        // C(n, i - 1) = C(n, i) * i / (n - i + 1)
        term *= f64::from(i) / f64::from(n - i + 1);
        i -= 1;
    }
    sum.min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn against_the_binomial_table() {
        // n = 10: P(X >= 8) = (45 + 10 + 1) / 1024, P(X >= 0) = 1
        assert!((sign_test_p(10, 8) - 56.0 / 1024.0).abs() < 1e-15);
        assert!((sign_test_p(10, 0) - 1.0).abs() < 1e-15);
        assert_eq!(sign_test_p(10, 11).to_bits(), 0f64.to_bits());
        // n = 15: P(X >= 12) = (455 + 105 + 15 + 1) / 32768
        assert!((sign_test_p(15, 12) - 576.0 / 32768.0).abs() < 1e-15);
        assert!(sign_test_p(64, 64) > 0.0);
    }
}
