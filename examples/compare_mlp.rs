//! An encrypted MLP (fully connected 64 → 16, ReLU, fully connected 16 → 10) on real images:
//! scikit-learn's 8 × 8 handwritten digits, the model trained in the clear and quantized to
//! integers so that the ReLU inputs stay in `[-1023, 1023]` (`examples/data/mlp_digits.txt`,
//! made by `make_data.py`, with 64 test images). The ReLU is one polynomial over that range
//! ([`compare::RangeFunctions::relu`], 11 levels); on the CPU at the CAT chain (N = 2^15,
//! 16 levels, 128-bit secure), 32 images per ciphertext.
//!
//! Layout per image (a block of 1024 slots, inside one row): slot `64·j + i` holds pixel `i`
//! (the client replicates the image for the 16 hidden units `j`). The first layer is a product
//! with the weights and `log2 64` rotations; after a modulus switch (the plaintext product's
//! noise would otherwise grow with the ReLU's degree), the ReLU runs on every slot; a mask keeps
//! slots `64·j`, 4 rotations copy each hidden value to `64·j + k`, a product with the second
//! layer's weights and 4 rotations leave logit `k` in slot `k`. Every logit is checked
//! against the quantized model on plaintext (exact), and the accuracy is reported beside the
//! plaintext models'.
//!
//! Run with `cargo run --release --example compare_mlp`; the last line is `correct: true` only
//! when every encrypted logit equals the plaintext one.

use compare::RangeFunctions;
use gpufhe::bgv::{Context, Decryptor, Encoder, Evaluator, Parameters, RowRotations, params};
use std::time::Instant;

const INPUTS: usize = 64;
const HIDDEN: usize = 16;
const CLASSES: usize = 10;
const BLOCK: usize = HIDDEN * INPUTS;

struct Model {
    w1: Vec<i64>,
    b1: Vec<i64>,
    w2: Vec<i64>,
    b2: Vec<i64>,
    images: Vec<i64>,
    labels: Vec<i64>,
    header: String,
}

fn load() -> Result<Model, Box<dyn std::error::Error>> {
    let text = include_str!("data/mlp_digits.txt");
    let mut lines = text.lines();
    let header = lines.next().ok_or("empty model file")?.to_string();
    let mut row = || -> Result<Vec<i64>, Box<dyn std::error::Error>> {
        let line = lines.next().ok_or("truncated model file")?;
        Ok(line
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()?)
    };
    Ok(Model {
        w1: row()?,
        b1: row()?,
        w2: row()?,
        b2: row()?,
        images: row()?,
        labels: row()?,
        header,
    })
}

impl Model {
    /// The quantized model on plaintext: the logits of one image.
    fn logits(&self, x: &[i64]) -> Vec<i64> {
        let h: Vec<i64> = (0..HIDDEN)
            .map(|j| {
                let s: i64 = (0..INPUTS).map(|i| self.w1[j * INPUTS + i] * x[i]).sum();
                (s + self.b1[j]).max(0)
            })
            .collect();
        (0..CLASSES)
            .map(|k| {
                (0..HIDDEN)
                    .map(|j| self.w2[k * HIDDEN + j] * h[j])
                    .sum::<i64>()
                    + self.b2[k]
            })
            .collect()
    }
}

fn argmax(v: &[i64]) -> usize {
    (0..v.len()).max_by_key(|&i| v[i]).unwrap_or(0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let m = load()?;
    println!("model: {}", m.header.trim_start_matches("# "));
    let params = Parameters::new(&params::CAT)?;
    let (n, t) = (params.n(), params.t());
    let ctx = Context::cpu(params.clone())?;
    let (enc, ev) = (Encoder::new(&ctx), Evaluator::new(&ctx));
    let kg = ctx.key_generator();
    let sk = kg.secret_key()?;
    let pk = kg.public_key(&sk)?;
    let rlk = kg.relin_key(&sk)?;
    let steps: Vec<i64> = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, -1, -2, -4, -8].to_vec();
    let gk = kg.galois_keys(&sk, &ev.galois_elements(&steps, false)?)?;
    let dec = Decryptor::new(&ctx, &sk);
    let relu = RangeFunctions::new(1023, t)?;
    let per_ct = n / BLOCK;
    let count = m.labels.len();
    let modt = |v: i64| v.rem_euclid(t as i64) as u64;
    // Plaintext patterns, the same in every image block.
    let pattern =
        |f: &dyn Fn(usize) -> i64| -> Vec<u64> { (0..n).map(|s| modt(f(s % BLOCK))).collect() };
    let w1 = pattern(&|s| m.w1[(s / INPUTS) * INPUTS + s % INPUTS]);
    let b1 = pattern(&|s| if s % INPUTS == 0 { m.b1[s / INPUTS] } else { 0 });
    let keep = pattern(&|s| i64::from(s % INPUTS == 0));
    let w2 = pattern(&|s| {
        let (j, k) = (s / INPUTS, s % INPUTS);
        if k < CLASSES { m.w2[k * HIDDEN + j] } else { 0 }
    });
    let b2 = pattern(&|s| if s < CLASSES { m.b2[s] } else { 0 });
    println!(
        "{count} test images, {per_ct} per ciphertext; ReLU over [-1023, 1023]: {} levels",
        relu.relu_levels()
    );

    let mut correct = true;
    let (mut right_enc, mut right_plain) = (0, 0);
    for (c, chunk) in m.images.chunks(per_ct * INPUTS).enumerate() {
        let start = Instant::now();
        let images = chunk.len() / INPUTS;
        let mut slots = vec![0u64; n];
        for img in 0..images {
            for j in 0..HIDDEN {
                for i in 0..INPUTS {
                    slots[img * BLOCK + j * INPUTS + i] = modt(chunk[img * INPUTS + i]);
                }
            }
        }
        let top = params.max_level();
        let x = ctx.encrypt_pk(&pk, &enc.encode(&slots, top)?)?;
        let t_enc = start.elapsed().as_secs_f64();
        // Layer 1: products, sums over the 64 pixels, bias; a switch sheds the product's noise.
        let mut h = ev.mul_plain(&x, &enc.encode(&w1, top)?)?;
        for s in [1, 2, 4, 8, 16, 32] {
            h = ev.add(&h, &ev.rotate_rows(&h, s, &gk)?)?;
        }
        let mut h = ev.add_plain(&h, &enc.encode(&b1, top)?)?;
        ev.mod_switch_assign(&mut h)?;
        let r = relu.relu(&ev, &h, &rlk)?;
        // Layer 2: keep slots 64·j, copy each to 64·j + k, weights, sums over j, bias.
        let mut r = ev.mul_plain(&r, &enc.encode(&keep, r.level())?)?;
        for s in [1, 2, 4, 8] {
            r = ev.add(&r, &ev.rotate_rows(&r, -s, &gk)?)?;
        }
        let mut o = ev.mul_plain(&r, &enc.encode(&w2, r.level())?)?;
        for s in [64, 128, 256, 512] {
            o = ev.add(&o, &ev.rotate_rows(&o, s, &gk)?)?;
        }
        let o = ev.add_plain(&o, &enc.encode(&b2, top)?)?;
        let t_eval = start.elapsed().as_secs_f64() - t_enc;
        let got = dec.decrypt_signed(&o)?;
        let total = start.elapsed().as_secs_f64();
        let mut ok_all = true;
        for img in 0..images {
            let idx = c * per_ct + img;
            let want = m.logits(&m.images[idx * INPUTS..(idx + 1) * INPUTS]);
            let logits = &got[img * BLOCK..img * BLOCK + CLASSES];
            ok_all &= logits == &want[..];
            right_enc += usize::from(argmax(logits) as i64 == m.labels[idx]);
            right_plain += usize::from(argmax(&want) as i64 == m.labels[idx]);
        }
        correct &= ok_all;
        println!(
            "ciphertext {c}: {images} images, encrypt {t_enc:.2} s, compute {t_eval:.2} s, end to end {total:.2} s, level {} left, logits match plaintext: {ok_all}",
            o.level()
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
