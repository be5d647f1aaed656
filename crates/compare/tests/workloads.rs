//! The workloads of `compare::workloads` (those of the examples and `gpu_bench`) at a small
//! insecure ring, each against the same computation on plaintext; the loaders of their data
//! on the files in `examples/data` and on malformed input. `gpu_workloads_match_plaintext`
//! runs the same bodies on the CUDA backend (ignored without a device; panics without one).

mod common;

use bgv::context::ring_for;
use bgv::{Context, Parameters};
use common::{TEST_N11_DEEP, cpu_ctx};
use compare::presets::Preset;
use compare::workloads::{array, mlp, query, recolor};
use compare::{ArrayOp, Error, WordType};
use fhe_cuda::{CudaBackend, Device};
use fhe_math::backend::IntegerBackend;
use test_support::SplitMix;

const MLP_DATA: &str = include_str!("../../../examples/data/mlp_digits.txt");
const PICTURE: &[u8] = include_bytes!("../../../examples/data/camera_128.pgm");

/// Sort of 8 and minimum of 16 signed 8-bit words (base-2^4 digits) at the small ring.
fn check_array<B: IntegerBackend>(ctx: &Context<B>) {
    let preset = Preset {
        name: "TEST_I8",
        params: TEST_N11_DEEP,
        word: WordType::I8,
        digit_bits: 4,
    };
    let mut r = SplitMix::new(3);
    for (k, op) in [(8, ArrayOp::Sort), (16, ArrayOp::Min)] {
        let mut v: Vec<i128> = (0..k).map(|_| r.below(256) as i128 - 128).collect();
        v[1] = v[4]; // a tie
        v[2] = -128;
        let w = array::ArrayWorkload::new(ctx, &preset, k, op).unwrap();
        assert_eq!(w.len(), k);
        let (got, t) = w.run(&v).unwrap();
        assert_eq!(got, array::plain(&v, op), "{op:?} of {v:?}");
        assert!(t.total() >= t.compute && t.compute > 0.0);
        assert!(matches!(w.run(&v[1..]), Err(Error::Mismatch { .. })));
    }
}

/// The recoloring of the first `N` pixels of the picture.
fn check_recolor<B: IntegerBackend>(ctx: &Context<B>) {
    let (_, _, pixels) = recolor::read_pgm(PICTURE).unwrap();
    let pixels = &pixels[..ctx.params().n()];
    let work = recolor::Recolor::new(ctx, 100).unwrap();
    let (got, level, _) = work.run(pixels).unwrap();
    assert_eq!(got, recolor::plain(pixels, 100));
    assert!(level >= 1);
    assert!(matches!(
        recolor::Recolor::new(ctx, 256),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        work.run(&[300]),
        Err(Error::InvalidArgument { .. })
    ));
}

/// The MLP on the first images that fit one ciphertext (two at `N = 2^11`).
fn check_mlp<B: IntegerBackend>(ctx: &Context<B>) {
    let m = mlp::Model::parse(MLP_DATA).unwrap();
    let work = mlp::Mlp::new(ctx, &m).unwrap();
    let count = work.images_per_ciphertext();
    assert_eq!(count, ctx.params().n() / mlp::BLOCK);
    let images = &m.images[..count * mlp::INPUTS];
    let (got, _, _) = work.run(images).unwrap();
    let want: Vec<Vec<i64>> = images.chunks(mlp::INPUTS).map(|x| m.logits(x)).collect();
    assert_eq!(got, want);
    assert!(matches!(
        work.run(&images[1..]),
        Err(Error::InvalidArgument { .. })
    ));
}

/// Every query type, comparisons non-blocking and blocking.
fn check_query<B: IntegerBackend + 'static>(ctx: &Context<B>) {
    let work = query::PrivateQuery::new(ctx).unwrap();
    let mut r = SplitMix::new(8);
    let x: Vec<u64> = (0..query::SPAN).map(|_| r.below(20)).collect();
    let w: Vec<u64> = (0..query::SPAN).map(|_| r.below(10)).collect();
    for q in 0..query::TYPES as u8 {
        for overlap in [true, false] {
            let (got, _, _) = work.run(&x, &w, q, overlap).unwrap();
            assert_eq!(got, query::plain(&x, &w, q, ctx.params().t()), "type {q}");
        }
    }
    assert!(matches!(
        work.run(&x, &w, 3, false),
        Err(Error::InvalidArgument { .. })
    ));
}

#[test]
fn array_workload_matches_plaintext() {
    check_array(&cpu_ctx(&TEST_N11_DEEP));
}

#[test]
fn recolor_workload_matches_plaintext() {
    check_recolor(&cpu_ctx(&TEST_N11_DEEP));
}

#[test]
fn mlp_workload_matches_plaintext() {
    check_mlp(&cpu_ctx(&TEST_N11_DEEP));
}

#[test]
fn query_workload_matches_plaintext() {
    check_query(&cpu_ctx(&TEST_N11_DEEP));
}

#[test]
fn loaders_read_the_data_and_refuse_malformed_input() {
    let (w, h, pixels) = recolor::read_pgm(PICTURE).unwrap();
    assert_eq!((w, h, pixels.len()), (128, 128, 128 * 128));
    for bad in [
        &b"P6\n2 2\n255\n\0\0\0\0"[..],
        b"P5\n2 2\n255\n\0",
        b"P5\n2",
    ] {
        assert!(matches!(
            recolor::read_pgm(bad),
            Err(Error::Malformed { .. })
        ));
    }
    let m = mlp::Model::parse(MLP_DATA).unwrap();
    assert_eq!(m.images.len(), m.labels.len() * mlp::INPUTS);
    let truncated: String = MLP_DATA.lines().take(3).collect::<Vec<_>>().join("\n");
    assert!(matches!(
        mlp::Model::parse(&truncated),
        Err(Error::Malformed { .. })
    ));
    assert!(matches!(
        mlp::Model::parse("# header\n1 2 x"),
        Err(Error::Malformed { .. })
    ));
    assert_eq!(mlp::argmax(&[1, 5, 5, 2]), 2);
    assert_eq!(array::plain(&[3, 1, 2], ArrayOp::Min), [1]);
    assert_eq!(query::plain(&[1, 2], &[3, 4], 2, 65537), 11);
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_workloads_match_plaintext() {
    let dev =
        Device::new(0).unwrap_or_else(|e| panic!("a CUDA device is required for gpu_* tests: {e}"));
    dev.warm_up().expect("kernel modules compile");
    let params = Parameters::new(&TEST_N11_DEEP).unwrap();
    let backend = CudaBackend::new(dev, ring_for(&params).unwrap()).unwrap();
    let ctx = Context::with_backend(params, backend).unwrap();
    check_array(&ctx);
    check_recolor(&ctx);
    check_mlp(&ctx);
    check_query(&ctx);
}
