//! An encrypted MLP (fully connected 64 → 16, ReLU, fully connected 16 → 10) on 8 × 8 images,
//! the model trained in the clear and quantized so that the ReLU inputs stay in
//! `[-1023, 1023]`; the ReLU is one polynomial over that range ([`RangeFunctions::relu`]).
//!
//! Layout per image (a block of `16 · 64 = 1024` slots, inside one row): slot `64·j + i` holds
//! pixel `i` (the client replicates the image for the 16 hidden units `j`). The first layer is
//! a product with the weights and `log2 64` rotations; after a modulus switch (the plaintext
//! product's noise would otherwise grow with the ReLU's degree) the ReLU runs on every slot; a
//! mask keeps slots `64·j`, 4 rotations copy each hidden value to `64·j + k`, a product with
//! the second layer's weights and 4 rotations leave logit `k` in slot `k` of the block:
//! `o_k = Σ_j W2[k, j] · max(0, Σ_i W1[j, i] · x_i + b1[j]) + b2[k]`.

use super::{PhaseClock, Phases};
use crate::error::{Error, Result};
use crate::range::RangeFunctions;
use bgv::{Context, Decryptor, Encoder, Evaluator, Plaintext, RowRotations};
use fhe_math::backend::IntegerBackend;
use rlwe::{GaloisKeys, PublicKey, RelinKey, SecretKey};

/// Pixels per image.
pub const INPUTS: usize = 64;
/// Hidden units.
pub const HIDDEN: usize = 16;
/// Classes (logits).
pub const CLASSES: usize = 10;
/// Slots per image.
pub const BLOCK: usize = HIDDEN * INPUTS;
/// The bound `R` of the ReLU inputs: `[-R, R]`.
pub const RELU_BOUND: u64 = 1023;

/// A quantized model and its test images.
#[derive(Clone, Debug)]
pub struct Model {
    /// First layer's weights, `W1[j, i]` at `j·64 + i`.
    pub w1: Vec<i64>,
    /// First layer's biases.
    pub b1: Vec<i64>,
    /// Second layer's weights, `W2[k, j]` at `k·16 + j`.
    pub w2: Vec<i64>,
    /// Second layer's biases.
    pub b2: Vec<i64>,
    /// Test images, 64 pixels each, back to back.
    pub images: Vec<i64>,
    /// The test images' labels.
    pub labels: Vec<i64>,
    /// The file's first line (a description of the model).
    pub header: String,
}

impl Model {
    /// Parses the text format of `examples/data/mlp_digits.txt`: a header line, then one line
    /// each of whitespace-separated integers for `W1`, `b1`, `W2`, `b2`, the images and the
    /// labels.
    pub fn parse(text: &str) -> Result<Self> {
        let bad = |reason: String| Error::Malformed {
            what: "MLP model",
            reason,
        };
        let mut lines = text.lines();
        let header = lines
            .next()
            .ok_or_else(|| bad("empty file".into()))?
            .to_string();
        let mut row = |name: &str, len: Option<usize>| -> Result<Vec<i64>> {
            let line = lines
                .next()
                .ok_or_else(|| bad(format!("no line for {name}")))?;
            let v = line
                .split_whitespace()
                .map(str::parse)
                .collect::<std::result::Result<Vec<i64>, _>>()
                .map_err(|e| bad(format!("{name}: {e}")))?;
            match len {
                Some(l) if v.len() != l => {
                    Err(bad(format!("{name} has {} values, not {l}", v.len())))
                }
                _ => Ok(v),
            }
        };
        let m = Model {
            w1: row("W1", Some(HIDDEN * INPUTS))?,
            b1: row("b1", Some(HIDDEN))?,
            w2: row("W2", Some(CLASSES * HIDDEN))?,
            b2: row("b2", Some(CLASSES))?,
            images: row("images", None)?,
            labels: row("labels", None)?,
            header,
        };
        if m.images.len() != m.labels.len() * INPUTS {
            return Err(bad(format!(
                "{} pixels for {} labels",
                m.images.len(),
                m.labels.len()
            )));
        }
        Ok(m)
    }

    /// The quantized model on plaintext: the logits of one image `x` (64 pixels).
    pub fn logits(&self, x: &[i64]) -> Vec<i64> {
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

/// The index of the largest logit (the last on ties).
pub fn argmax(v: &[i64]) -> usize {
    (0..v.len()).max_by_key(|&i| v[i]).unwrap_or(0)
}

/// The encrypted MLP over one ciphertext of images, keys generated.
pub struct Mlp<B: IntegerBackend> {
    ctx: Context<B>,
    enc: Encoder<B>,
    ev: Evaluator<B>,
    sk: SecretKey<B>,
    pk: PublicKey<B>,
    rlk: RelinKey<B>,
    gk: GaloisKeys<B>,
    relu: RangeFunctions,
    /// Plaintext slot patterns, the same in every image block: W1, b1, the mask of slots
    /// `64·j`, W2, b2.
    w1: Vec<u64>,
    b1: Vec<u64>,
    keep: Vec<u64>,
    w2: Vec<u64>,
    b2: Vec<u64>,
}

impl<B: IntegerBackend> Mlp<B> {
    /// Generates the keys over `ctx` (a ring of at least 1024 slots per row) for `model`.
    pub fn new(ctx: &Context<B>, model: &Model) -> Result<Self> {
        let (n, t) = (ctx.params().n(), ctx.params().t());
        if n < 2 * BLOCK {
            return Err(Error::InvalidArgument {
                op: "build the MLP",
                reason: format!("a ring of {n} slots holds no block of {BLOCK} in a row"),
            });
        }
        let ev = Evaluator::new(ctx);
        let kg = ctx.key_generator();
        let sk = kg.secret_key()?;
        let pk = kg.public_key(&sk)?;
        let rlk = kg.relin_key(&sk)?;
        let steps: Vec<i64> = vec![1, 2, 4, 8, 16, 32, 64, 128, 256, 512, -1, -2, -4, -8];
        let gk = kg.galois_keys(&sk, &ev.galois_elements(&steps, false)?)?;
        let modt = |v: i64| v.rem_euclid(t as i64) as u64;
        let pattern =
            |f: &dyn Fn(usize) -> i64| -> Vec<u64> { (0..n).map(|s| modt(f(s % BLOCK))).collect() };
        let m = model;
        Ok(Mlp {
            ctx: ctx.clone(),
            enc: Encoder::new(ctx),
            relu: RangeFunctions::new(RELU_BOUND, t)?,
            w1: pattern(&|s| m.w1[(s / INPUTS) * INPUTS + s % INPUTS]),
            b1: pattern(&|s| if s % INPUTS == 0 { m.b1[s / INPUTS] } else { 0 }),
            keep: pattern(&|s| i64::from(s % INPUTS == 0)),
            w2: pattern(&|s| {
                let (j, k) = (s / INPUTS, s % INPUTS);
                if k < CLASSES { m.w2[k * HIDDEN + j] } else { 0 }
            }),
            b2: pattern(&|s| if s < CLASSES { m.b2[s] } else { 0 }),
            ev,
            sk,
            pk,
            rlk,
            gk,
        })
    }

    /// Images per ciphertext: `N / 1024`.
    pub fn images_per_ciphertext(&self) -> usize {
        self.ctx.params().n() / BLOCK
    }

    /// The levels of the ReLU.
    pub fn relu_levels(&self) -> usize {
        self.relu.relu_levels()
    }

    fn encode(&self, v: &[u64], level: usize) -> Result<Plaintext<B>> {
        Ok(self.enc.encode(v, level)?)
    }

    /// Encrypts `images` (64 pixels each, at most [`Mlp::images_per_ciphertext`]), runs the
    /// model, decrypts: the 10 logits of each image, the level left, and the phases' times.
    pub fn run(&self, images: &[i64]) -> Result<(Vec<Vec<i64>>, usize, Phases)> {
        let count = images.len() / INPUTS;
        if !images.len().is_multiple_of(INPUTS) || count > self.images_per_ciphertext() {
            return Err(Error::InvalidArgument {
                op: "run the MLP",
                reason: format!(
                    "{} pixels are not at most {} images of {INPUTS}",
                    images.len(),
                    self.images_per_ciphertext()
                ),
            });
        }
        let (n, t) = (self.ctx.params().n(), self.ctx.params().t());
        let (ev, gk, top) = (&self.ev, &self.gk, self.ctx.params().max_level());
        let dec = Decryptor::new(&self.ctx, &self.sk);
        let mut clock = PhaseClock::start();
        let mut slots = vec![0u64; n];
        for img in 0..count {
            for j in 0..HIDDEN {
                for i in 0..INPUTS {
                    slots[img * BLOCK + j * INPUTS + i] =
                        images[img * INPUTS + i].rem_euclid(t as i64) as u64;
                }
            }
        }
        let x = self.ctx.encrypt_pk(&self.pk, &self.encode(&slots, top)?)?;
        clock.mark();
        // Layer 1: products, sums over the 64 pixels, bias; a switch sheds the product's noise.
        let mut h = ev.mul_plain(&x, &self.encode(&self.w1, top)?)?;
        for s in [1, 2, 4, 8, 16, 32] {
            h = ev.add(&h, &ev.rotate_rows(&h, s, gk)?)?;
        }
        let mut h = ev.add_plain(&h, &self.encode(&self.b1, top)?)?;
        ev.mod_switch_assign(&mut h)?;
        let r = self.relu.relu(ev, &h, &self.rlk)?;
        // Layer 2: keep slots 64·j, copy each to 64·j + k, weights, sums over j, bias.
        let mut r = ev.mul_plain(&r, &self.encode(&self.keep, r.level())?)?;
        for s in [1, 2, 4, 8] {
            r = ev.add(&r, &ev.rotate_rows(&r, -s, gk)?)?;
        }
        let mut o = ev.mul_plain(&r, &self.encode(&self.w2, r.level())?)?;
        for s in [64, 128, 256, 512] {
            o = ev.add(&o, &ev.rotate_rows(&o, s, gk)?)?;
        }
        let o = ev.add_plain(&o, &self.encode(&self.b2, top)?)?;
        clock.mark();
        let got = dec.decrypt_signed(&o)?;
        let logits = (0..count)
            .map(|img| got[img * BLOCK..img * BLOCK + CLASSES].to_vec())
            .collect();
        clock.mark();
        Ok((logits, o.level(), clock.phases()))
    }
}
