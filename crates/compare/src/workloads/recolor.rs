//! Image recoloring on encrypted pixels: each pixel's distance to a threshold `θ` is compared
//! with 0 by one polynomial over `[-255, 255]` ([`RangeFunctions::lt_zero`]), and the pixel
//! is doubled where it is below: `p·(1 + [p - θ < 0])`, one pixel per slot.

use super::{PhaseClock, Phases};
use crate::error::{Error, Result};
use crate::range::RangeFunctions;
use bgv::{Context, Decryptor, Encoder, Evaluator};
use fhe_math::backend::IntegerBackend;
use rlwe::{PublicKey, RelinKey, SecretKey};

/// The largest pixel value (8-bit grey levels).
pub const MAX_PIXEL: u64 = 255;

/// The recoloring of one ciphertext of pixels, keys generated.
pub struct Recolor<B: IntegerBackend> {
    ctx: Context<B>,
    enc: Encoder<B>,
    ev: Evaluator<B>,
    sk: SecretKey<B>,
    pk: PublicKey<B>,
    rlk: RelinKey<B>,
    f: RangeFunctions,
    threshold: i64,
}

impl<B: IntegerBackend> Recolor<B> {
    /// Generates the keys over `ctx` for threshold `threshold ∈ [0, 255]`.
    pub fn new(ctx: &Context<B>, threshold: i64) -> Result<Self> {
        if !(0..=MAX_PIXEL as i64).contains(&threshold) {
            return Err(Error::InvalidArgument {
                op: "recolor",
                reason: format!("threshold {threshold} is outside [0, {MAX_PIXEL}]"),
            });
        }
        let kg = ctx.key_generator();
        let sk = kg.secret_key()?;
        let pk = kg.public_key(&sk)?;
        let rlk = kg.relin_key(&sk)?;
        Ok(Recolor {
            ctx: ctx.clone(),
            enc: Encoder::new(ctx),
            ev: Evaluator::new(ctx),
            sk,
            pk,
            rlk,
            f: RangeFunctions::new(MAX_PIXEL, ctx.params().t())?,
            threshold,
        })
    }

    /// The levels of `[d < 0]` over `[-255, 255]`.
    pub fn levels(&self) -> usize {
        self.f.lt_levels()
    }

    /// Encrypts `pixels` (at most `N`, each in `[0, 255]`), recolors them, decrypts: the new
    /// pixels (as many as given), the level left, and the phases' times.
    pub fn run(&self, pixels: &[u64]) -> Result<(Vec<u64>, usize, Phases)> {
        let n = self.ctx.params().n();
        if pixels.len() > n || pixels.iter().any(|&p| p > MAX_PIXEL) {
            return Err(Error::InvalidArgument {
                op: "recolor",
                reason: format!("expected at most {n} pixels in [0, {MAX_PIXEL}]"),
            });
        }
        let dec = Decryptor::new(&self.ctx, &self.sk);
        let mut clock = PhaseClock::start();
        let pt = self.enc.encode(pixels, self.ctx.params().max_level())?;
        let cp = self.ctx.encrypt_pk(&self.pk, &pt)?;
        clock.mark();
        let d = self.ev.add_scalar(&cp, -self.threshold)?;
        let below = self.f.lt_zero(&self.ev, &d, &self.rlk)?;
        let out = self
            .ev
            .add(&cp, &self.ev.mul_relin(&cp, &below, &self.rlk)?)?;
        clock.mark();
        let mut got = dec.decrypt(&out)?;
        got.truncate(pixels.len());
        clock.mark();
        Ok((got, out.level(), clock.phases()))
    }
}

/// The same recoloring on plaintext.
pub fn plain(pixels: &[u64], threshold: i64) -> Vec<u64> {
    pixels
        .iter()
        .map(|&p| if (p as i64) < threshold { 2 * p } else { p })
        .collect()
}

/// The width, height and pixels of a binary 8-bit PGM (`P5`, maximum 255).
pub fn read_pgm(bytes: &[u8]) -> Result<(usize, usize, Vec<u64>)> {
    let bad = |reason: &str| Error::Malformed {
        what: "PGM image",
        reason: reason.to_string(),
    };
    let mut fields = Vec::new();
    let mut pos = 0;
    while fields.len() < 4 {
        while bytes.get(pos).is_some_and(|b| b.is_ascii_whitespace()) {
            pos += 1;
        }
        let start = pos;
        while bytes.get(pos).is_some_and(|b| !b.is_ascii_whitespace()) {
            pos += 1;
        }
        if start == pos {
            return Err(bad("truncated header"));
        }
        fields.push(String::from_utf8_lossy(&bytes[start..pos]).into_owned());
    }
    if fields[0] != "P5" || fields[3] != "255" {
        return Err(bad("not an 8-bit binary PGM"));
    }
    let dim = |s: &str| s.parse::<usize>().map_err(|_| bad("bad width or height"));
    let (w, h) = (dim(&fields[1])?, dim(&fields[2])?);
    let len = w.checked_mul(h).ok_or_else(|| bad("image too large"))?;
    let data = bytes
        .get(pos + 1..pos + 1 + len)
        .ok_or_else(|| bad("truncated pixels"))?;
    Ok((w, h, data.iter().map(|&b| u64::from(b)).collect()))
}
