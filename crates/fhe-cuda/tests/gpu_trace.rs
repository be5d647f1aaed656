//! The launch timeline (`fhe_cuda::trace`), in a process of its own: the trace is process-wide,
//! so the other GPU tests' launches would mix into it.

use fhe_cuda::{CudaBackend, trace};
use fhe_math::backend::prelude::*;
use fhe_math::poly::Shape;
use fhe_math::primes::ntt_primes;
use fhe_math::ring::RingContext;
use fhe_math::sampler::{Domain, Seed};

/// n = 2^13, 6 ciphertext primes, 2 special primes, 3 digits: the NTT runs two passes and a key
/// switch forks the side stream.
fn backend() -> CudaBackend {
    let dev = fhe_cuda::Device::new(0)
        .unwrap_or_else(|e| panic!("a CUDA device is required for gpu_* tests: {e}"));
    let n = 1usize << 13;
    let mut qs = ntt_primes(60, 2 * n as u64, 1, &[]).unwrap();
    qs.extend(ntt_primes(40, 2 * n as u64, 5, &qs).unwrap());
    let ps = ntt_primes(60, 2 * n as u64, 2, &qs).unwrap();
    let ring = RingContext::new(n, &qs, &ps, vec![0..2, 2..4, 4..6]).unwrap();
    CudaBackend::new(dev, ring).unwrap()
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_trace_shows_each_launch_on_its_stream() {
    let be = backend();
    let top = be.ring().max_level();
    let shape = |components, extended| Shape {
        components,
        level: top,
        extended,
    };
    let sample = |s: Shape, i| {
        be.sample_uniform(&Seed([7; 32]), Domain::Other, i, s)
            .unwrap()
    };
    let mut a = sample(shape(2, false), 0);
    let key = sample(shape(6, true), 1);
    // Untraced first calls load the kernel modules.
    be.ntt(&mut a).unwrap();
    be.key_switch(&a, 1, &key, None).unwrap();
    be.synchronize().unwrap();

    trace::start();
    be.ntt(&mut a).unwrap();
    be.intt(&mut a).unwrap();
    let spans = trace::take().unwrap();
    let names: Vec<&str> = spans.iter().map(|s| s.kernel.as_str()).collect();
    assert_eq!(names.len(), 4, "two passes each: {names:?}");
    assert!(
        names[..2].iter().all(|k| k.starts_with("ntt_fwd")),
        "{names:?}"
    );
    assert!(
        names[2..].iter().all(|k| k.starts_with("ntt_inv")),
        "{names:?}"
    );
    assert_eq!(spans[0].start_us, 0.0);
    for (i, s) in spans.iter().enumerate() {
        assert_eq!(s.stream, 0, "one stream: {s:?}");
        assert!(s.start_us <= s.end_us, "{s:?}");
        // Host launch times are in launch order, from the trace's start.
        assert!(s.host_us >= 0.0, "{s:?}");
        // Stream order: a pass starts after the one before it has ended.
        if i > 0 {
            assert!(
                s.host_us >= spans[i - 1].host_us,
                "{:?} then {s:?}",
                spans[i - 1]
            );
            assert!(
                s.start_us >= spans[i - 1].end_us,
                "{:?} then {s:?}",
                spans[i - 1]
            );
        }
    }

    // A key switch forks the side stream: its launches show on a second stream, between the
    // main stream's first and last.
    trace::start();
    be.key_switch(&a, 1, &key, None).unwrap();
    let spans = trace::take().unwrap();
    let side: Vec<_> = spans.iter().filter(|s| s.stream == 1).collect();
    assert!(!side.is_empty(), "no side-stream launch: {spans:?}");
    assert!(spans.iter().all(|s| s.stream <= 1), "{spans:?}");
    let last_main = spans.iter().rfind(|s| s.stream == 0).unwrap();
    assert!(
        side.iter().all(|s| s.end_us <= last_main.end_us),
        "{spans:?}"
    );

    // Nothing is traced after `take`.
    be.ntt(&mut a).unwrap();
    be.synchronize().unwrap();
    assert!(trace::take().unwrap().is_empty());
}
