//! Settings shared by the integer-scheme CPU benchmarks (`bgv_cpu`, `bfv_cpu`) and `math_parts`.

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion};
use std::time::Duration;

/// A benchmark group named `name` with the short settings of these benchmarks: 10 samples,
/// 3 s of measurement and 0.5 s of warm-up per benchmark.
pub fn quick_group<'a>(c: &'a mut Criterion, name: &str) -> BenchmarkGroup<'a, WallTime> {
    let mut g = c.benchmark_group(name);
    g.sample_size(10)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_millis(500));
    g
}
