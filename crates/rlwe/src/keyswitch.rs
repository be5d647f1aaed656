//! Key switching on ciphertexts: relinearization, Galois automorphisms (rotations, conjugation)
//! and hoisted automorphisms sharing one `mod_up`.

use crate::ciphertext::Ciphertext;
use crate::error::{Error, Result, check_same};
use crate::keys::{RelinKey, SwitchingKey};
use fhe_math::backend::Backend;

fn check_two<B: Backend>(backend: &B, ct: &Ciphertext<B>, op: &'static str) -> Result<()> {
    if backend.shape(&ct.poly).components != 2 {
        return Err(Error::InvalidOperand {
            op,
            reason: "the ciphertext must have 2 components (relinearize first)".into(),
        });
    }
    Ok(())
}

/// Relinearizes a 3-component ciphertext back to 2 components; `rescale` fuses the rescale that
/// usually follows (the caller updates the scale).
pub fn relinearize<B: Backend>(
    backend: &B,
    ct: Ciphertext<B>,
    rlk: &RelinKey<B>,
    rescale: bool,
) -> Result<Ciphertext<B>> {
    check_same("relinearize", ct.meta.fingerprint, rlk.0.fingerprint)?;
    if backend.shape(&ct.poly).components != 3 {
        return Err(Error::InvalidOperand {
            op: "relinearize",
            reason: "the ciphertext must have 3 components".into(),
        });
    }
    if rescale && ct.meta.level == 0 {
        return Err(Error::InvalidOperand {
            op: "rescale",
            reason: "the ciphertext is at level 0".into(),
        });
    }
    let mut meta = ct.meta;
    let poly = backend.relinearize(ct.poly, &rlk.0.poly, rescale)?;
    if rescale {
        meta.level -= 1;
    }
    Ok(Ciphertext {
        poly,
        meta,
        seed: None,
    })
}

/// `σ_g(ct)` re-encrypted under `s` with the Galois key of `g`.
pub fn apply_galois<B: Backend>(
    backend: &B,
    ct: &Ciphertext<B>,
    g: u64,
    key: &SwitchingKey<B>,
) -> Result<Ciphertext<B>> {
    Ok(apply_galois_hoisted(backend, ct, &[(g, key)])?
        .pop()
        .expect("one key gives one result"))
}

/// `σ_g(ct)` for several `g` sharing one `mod_up` of `c_1` (hoisting).
pub fn apply_galois_hoisted<B: Backend>(
    backend: &B,
    ct: &Ciphertext<B>,
    keys: &[(u64, &SwitchingKey<B>)],
) -> Result<Vec<Ciphertext<B>>> {
    check_two(backend, ct, "rotate")?;
    for (_, k) in keys {
        check_same("rotate", ct.meta.fingerprint, k.fingerprint)?;
    }
    let refs: Vec<(u64, &B::Poly)> = keys.iter().map(|(g, k)| (*g, &k.poly)).collect();
    let polys = backend.rotate_hoisted(&ct.poly, &refs)?;
    Ok(polys
        .into_iter()
        .map(|poly| Ciphertext {
            poly,
            meta: ct.meta,
            seed: None,
        })
        .collect())
}
