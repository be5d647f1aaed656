//! An encrypted MLP (fully connected 64 → 16, ReLU, fully connected 16 → 10) on real images:
//! scikit-learn's 8 × 8 handwritten digits, the model trained in the clear and quantized to
//! integers so that the ReLU inputs stay in `[-1023, 1023]` (`examples/data/mlp_digits.txt`,
//! made by `make_data.py`, with 64 test images). The ReLU is one polynomial over that range
//! ([`compare::RangeFunctions::relu`], 11 levels); at the CAT chain (N = 2^15, 16 levels,
//! 128-bit secure), 32 images per ciphertext. The layout and the circuit are those of
//! `compare::workloads::mlp`, the workload `gpu_bench`'s `cmp:mlp_batch` times.
//!
//! Every logit is checked against the quantized model on plaintext (exact), and the accuracy
//! is reported beside the plaintext model's. Each ciphertext is timed end to end (encrypt,
//! compute, decrypt; key generation apart). The backend is `AnyBackend::auto`: the GPU when
//! one is usable, else the CPU (`FHE_BACKEND=cpu` forces the CPU).
//!
//! Run with `cargo run --release --example compare_mlp`; the last line is `correct: true` only
//! when every encrypted logit equals the plaintext one.

use compare::workloads::mlp::{INPUTS, Mlp, Model, argmax};
use gpufhe::bgv::{Context, Parameters, params};
use gpufhe::cuda::AnyBackend;
use gpufhe::math::backend::RingBackend;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let m = Model::parse(include_str!("data/mlp_digits.txt"))?;
    println!("model: {}", m.header.trim_start_matches("# "));
    let params = Parameters::new(&params::CAT)?;
    let (backend, why_cpu) = AnyBackend::auto_explained(gpufhe::bgv::context::ring_for(&params)?);
    if let Some(e) = why_cpu {
        println!("no usable GPU ({e}): running on the CPU");
    }
    println!("backend: {}", backend.device_name());
    let ctx = Context::with_backend(params, backend)?;
    let clock = Instant::now();
    let mlp = Mlp::new(&ctx, &m)?;
    println!("key generation: {:.2} s", clock.elapsed().as_secs_f64());
    let per_ct = mlp.images_per_ciphertext();
    let count = m.labels.len();
    println!(
        "{count} test images, {per_ct} per ciphertext; ReLU over [-1023, 1023]: {} levels",
        mlp.relu_levels()
    );

    let mut correct = true;
    let (mut right_enc, mut right_plain) = (0, 0);
    for (c, chunk) in m.images.chunks(per_ct * INPUTS).enumerate() {
        let (logits, level, t) = mlp.run(chunk)?;
        let mut ok_all = true;
        for (img, got) in logits.iter().enumerate() {
            let idx = c * per_ct + img;
            let want = m.logits(&m.images[idx * INPUTS..(idx + 1) * INPUTS]);
            ok_all &= got == &want;
            right_enc += usize::from(argmax(got) as i64 == m.labels[idx]);
            right_plain += usize::from(argmax(&want) as i64 == m.labels[idx]);
        }
        correct &= ok_all;
        println!(
            "ciphertext {c}: {} images, encrypt {:.3} s, compute {:.3} s, decrypt {:.3} s, end to end {:.3} s, level {level} left, logits match plaintext: {ok_all}",
            logits.len(),
            t.encrypt,
            t.compute,
            t.decrypt,
            t.total(),
        );
    }
    println!(
        "accuracy on the {count} images: encrypted {:.3}, quantized plaintext {:.3}",
        right_enc as f64 / count as f64,
        right_plain as f64 / count as f64
    );
    println!("correct: {correct}");
    Ok(())
}
