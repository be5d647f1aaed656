//! Image recoloring on encrypted pixels: each pixel's distance to a threshold is compared
//! with 0 by one polynomial over its range ([`compare::RangeFunctions`], `R = 255`), and the
//! pixel is doubled where it is below the threshold (`p·(1 + [p < θ])`), on the CPU at the CAT
//! chain (N = 2^15, 16 levels, 128-bit secure). The picture is scikit-image's `camera` sample
//! reduced to 128 × 128 (`examples/data/camera_128.pgm`, made by `make_data.py`): 16384
//! pixels in one ciphertext. Timed end to end and checked against the same recoloring on
//! plaintext; the result is written to `target/camera_recolored.pgm`.
//!
//! Run with `cargo run --release --example compare_recolor`; the last line is `correct: true`
//! only when every pixel equals the plaintext result.

use compare::RangeFunctions;
use gpufhe::bgv::{Context, Decryptor, Encoder, Evaluator, Parameters, params};
use std::time::Instant;

/// The pixels of a binary 8-bit PGM (`P5`, maximum 255).
fn read_pgm(bytes: &[u8]) -> Result<(usize, usize, Vec<u64>), Box<dyn std::error::Error>> {
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
        fields.push(std::str::from_utf8(&bytes[start..pos])?.to_string());
    }
    if fields[0] != "P5" || fields[3] != "255" {
        return Err("not an 8-bit binary PGM".into());
    }
    let (w, h): (usize, usize) = (fields[1].parse()?, fields[2].parse()?);
    let data = bytes.get(pos + 1..pos + 1 + w * h).ok_or("truncated PGM")?;
    Ok((w, h, data.iter().map(|&b| b as u64).collect()))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (w, h, pixels) = read_pgm(include_bytes!("data/camera_128.pgm"))?;
    let threshold = 100i64;
    let params = Parameters::new(&params::CAT)?;
    let ctx = Context::cpu(params.clone())?;
    let (enc, ev) = (Encoder::new(&ctx), Evaluator::new(&ctx));
    let kg = ctx.key_generator();
    let sk = kg.secret_key()?;
    let pk = kg.public_key(&sk)?;
    let rlk = kg.relin_key(&sk)?;
    let dec = Decryptor::new(&ctx, &sk);
    let f = RangeFunctions::new(255, params.t())?;
    println!(
        "{w} x {h} pixels, threshold {threshold}; [d < 0] for d in [-255, 255]: {} levels",
        f.lt_levels()
    );

    let start = Instant::now();
    let cp = ctx.encrypt_pk(&pk, &enc.encode(&pixels, params.max_level())?)?;
    let t_enc = start.elapsed().as_secs_f64();
    let d = ev.add_scalar(&cp, -threshold)?;
    let below = f.lt_zero(&ev, &d, &rlk)?;
    let out = ev.add(&cp, &ev.mul_relin(&cp, &below, &rlk)?)?;
    let t_eval = start.elapsed().as_secs_f64() - t_enc;
    let got = dec.decrypt(&out)?;
    let total = start.elapsed().as_secs_f64();

    let want: Vec<u64> = pixels
        .iter()
        .map(|&p| if (p as i64) < threshold { 2 * p } else { p })
        .collect();
    let correct = got[..w * h] == want[..];
    let changed = pixels.iter().filter(|&&p| (p as i64) < threshold).count();
    println!(
        "encrypt {t_enc:.2} s, compute {t_eval:.2} s, end to end {total:.2} s ({changed} pixels recolored, level {} left)",
        out.level()
    );
    let mut pgm = format!("P5\n{w} {h}\n255\n").into_bytes();
    pgm.extend(got[..w * h].iter().map(|&v| v.min(255) as u8));
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/target/camera_recolored.pgm");
    if std::fs::write(path, pgm).is_ok() {
        println!("wrote {path}");
    }
    println!("correct: {correct}");
    Ok(())
}
