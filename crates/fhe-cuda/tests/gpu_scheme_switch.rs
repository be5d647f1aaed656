//! Scheme switching on the GPU against the CPU backend: the same seeds give the same LWE words
//! (CKKS → LWE, PBS) and the same CKKS ciphertext words (LWE → CKKS, and the step composite on
//! batches kept in the backend's memory).

use ckks::{Context, Parameters};
use fhe_cuda::{CudaBackend, Device};
use fhe_math::backend::KeySwitchBackend;
use fhe_math::backend::RingBackend;
use fhe_math::backend::blind_rotate::BlindRotateBackend;
use fhe_math::fft::Complex64;
use fhe_math::sampler::Seed;
use std::sync::Arc;
use tfhe_switch::ClientKey;
use tfhe_switch::scheme_switch::{
    CKKS_SWITCH_TEST_INSECURE, LweEncoding, SWITCH_TEST_INSECURE, SchemeSwitch, SwitchKeys,
};

const SLOTS: usize = 16;

struct Run {
    lwes: Vec<Vec<u64>>,
    pbs: Vec<Vec<u64>>,
    back: fhe_math::poly::RnsPoly,
    step: fhe_math::poly::RnsPoly,
}

fn run<B: KeySwitchBackend + BlindRotateBackend>(ctx: &Context<B>) -> Run {
    let params = SWITCH_TEST_INSECURE.opt_in_insecure();
    let sk = ctx
        .key_generator()
        .secret_key_from_seed(Seed([1; 32]))
        .unwrap();
    let client = ClientKey::generate(&params.tfhe, &Seed([2; 32])).unwrap();
    let keys = SwitchKeys::generate(ctx, &sk, &client, &params, SLOTS, &Seed([3; 32])).unwrap();
    let sw = SchemeSwitch::new(ctx, &keys).unwrap();
    let top = ctx.params().max_level();
    let z: Vec<Complex64> = (0..SLOTS)
        .map(|j| Complex64::new(((j as f64) * 0.37).sin() * 0.9, 0.0))
        .collect();
    let pt = sw
        .evaluator()
        .encoder()
        .encode_with(&z, top, ctx.params().scale(top).unwrap(), SLOTS)
        .unwrap();
    let ct = ctx
        .encrypt_sk_with_seeds(&sk, &pt, Seed([4; 32]), &Seed([5; 32]))
        .unwrap();
    let enc = LweEncoding::sign(params.tfhe.message_space(), 1.0).unwrap();
    let lwes = sw.switch_to_lwe(&ct, &enc).unwrap();
    let pbs = sw.apply_lut(&lwes, &sw.step_table().unwrap()).unwrap();
    let back = sw.switch_to_ckks(&pbs).unwrap();
    // The composite keeps the LWE batches in the backend's memory between the stages.
    let step = sw.ckks_step(&ct, enc.bound()).unwrap();
    let words = |v: &[tfhe_switch::LweCiphertext]| {
        v.iter()
            .map(|c| c.as_residues().to_vec())
            .collect::<Vec<_>>()
    };
    Run {
        lwes: words(&lwes),
        pbs: words(&pbs),
        back: ctx.backend().download(back.poly()).unwrap(),
        step: ctx.backend().download(step.poly()).unwrap(),
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_scheme_switch_is_bit_identical_to_the_cpu() {
    let literal = Parameters::new(&CKKS_SWITCH_TEST_INSECURE).unwrap();
    let cpu_ctx = Context::cpu(literal.clone()).unwrap();
    let dev =
        Device::new(0).unwrap_or_else(|e| panic!("a CUDA device is required for gpu_* tests: {e}"));
    let gpu = CudaBackend::new(dev, Arc::clone(cpu_ctx.backend().ring())).unwrap();
    let gpu_ctx = Context::with_backend(literal, gpu).unwrap();
    let (c, g) = (run(&cpu_ctx), run(&gpu_ctx));
    assert_eq!(c.lwes, g.lwes, "CKKS → LWE differs");
    assert_eq!(c.pbs, g.pbs, "PBS differs");
    assert_eq!(c.back, g.back, "LWE → CKKS differs");
    assert_eq!(c.step, g.step, "the step on device batches differs");
}
