//! Batched NTTs of small rings: many polynomials of `N = 2^log_n` over `limbs` primes in one
//! buffer (one component per polynomial), the shape of blind rotation and of small-ring
//! comparison work. Preset names: `ntt:<log_n>x<limbs>x<batch>`, e.g. `ntt:11x1x256`.

use super::{PresetResult, R, RingShape, Row, Timer, log_timing};
use gpufhe::cuda::{CudaBackend, Device};
use gpufhe::math::backend::prelude::*;
use gpufhe::math::poly::Shape;
use gpufhe::math::primes::ntt_primes;
use gpufhe::math::ring::RingContext;
use serde_json::json;
use std::sync::Arc;
use std::time::Instant;

/// `(log_n, limbs, batch)` of a batched-NTT preset name (after the `ntt:` prefix).
pub fn preset(name: &str) -> R<(u32, usize, usize)> {
    let parts: Vec<&str> = name.split('x').collect();
    let bad = || {
        format!("bad batched-NTT preset {name:?} (form: <log_n>x<limbs>x<batch>, e.g. 11x1x256)")
    };
    if parts.len() != 3 {
        return Err(bad().into());
    }
    let log_n: u32 = parts[0].parse().map_err(|_| bad())?;
    let limbs: usize = parts[1].parse().map_err(|_| bad())?;
    let batch: usize = parts[2].parse().map_err(|_| bad())?;
    if !(10..=17).contains(&log_n) || !(1..=64).contains(&limbs) || !(1..=1 << 16).contains(&batch)
    {
        return Err(bad().into());
    }
    Ok((log_n, limbs, batch))
}

/// Times the forward and the inverse NTT of `batch` polynomials at once.
pub fn bench_preset(dev: &Arc<Device>, name: &str, reps: usize, warm: usize) -> R<PresetResult> {
    let t_setup = Instant::now();
    let (log_n, limbs, batch) = preset(name)?;
    let n = 1usize << log_n;
    dev.synchronize()?;
    dev.reset_pool_peak()?;
    // One special prime besides the `limbs` ciphertext primes: the ring's key-switching tables
    // need a target basis even though only the ciphertext limbs are transformed here.
    let primes = ntt_primes(50, 2 * n as u64, limbs + 1, &[])?;
    let (q, p) = primes.split_at(limbs);
    let ring = RingContext::new(n, q, p, std::iter::once(0..limbs).collect())?;
    let be = CudaBackend::new(dev.clone(), ring)?;
    let shape = Shape {
        components: batch,
        level: limbs - 1,
        extended: false,
    };
    let mut host = be.ring().zeros(shape)?;
    for c in 0..batch {
        for (s, &qs) in q.iter().enumerate() {
            for (i, w) in host.limb_mut(c, s).iter_mut().enumerate() {
                *w = ((c * n + i) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) % qs;
            }
        }
    }
    let input = be.upload(&host)?;
    be.synchronize()?;
    let setup_s = t_setup.elapsed().as_secs_f64();
    let timer = Timer::new(dev.clone(), be.stream().clone(), reps, warm)?;
    let dup = || -> R<_> { Ok(be.duplicate(&input)?) };
    let mut rows = Vec::new();
    for (op, inverse) in [("ntt_batch_fwd", false), ("ntt_batch_inv", true)] {
        let t = timer.time(reps, dup, |mut p| {
            if inverse {
                be.intt(&mut p)?;
            } else {
                be.ntt(&mut p)?;
            }
            Ok(p)
        })?;
        log_timing(name, op, &t);
        rows.push(Row {
            op,
            t,
            reps,
            floor_us: None,
        });
    }
    PresetResult::new(
        dev,
        "ntt",
        format!("ntt:{name}"),
        RingShape::ring_only(log_n, limbs - 1),
        rows,
        json!({"preset": format!("ntt:{name}"), "batch": batch, "limbs": limbs}),
        setup_s,
    )
}
