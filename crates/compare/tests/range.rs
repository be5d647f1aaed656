//! Range functions of single-slot values against the plaintext functions, every slot, with
//! the measured levels.

use bgv::params::TEST_N11_INSECURE;
use bgv::{Context, Decryptor, Encoder, Evaluator, Parameters};
use compare::{Error, RangeFunctions};
use test_support::{SeededKeys, SplitMix, seed};

#[test]
fn sign_lt_relu_over_the_range() {
    let ctx = Context::cpu(Parameters::new(&TEST_N11_INSECURE).unwrap()).unwrap();
    let SeededKeys { sk, pk, rlk } = SeededKeys::new(&ctx.key_generator()).unwrap();
    let (enc, ev, dec) = (
        Encoder::new(&ctx),
        Evaluator::new(&ctx),
        Decryptor::new(&ctx, &sk),
    );
    let t = ctx.params().t();
    let n = ctx.params().n();
    let top = ctx.params().max_level();
    for r in [1i64, 37, 200] {
        let f = RangeFunctions::new(r as u64, t).unwrap();
        let mut g = SplitMix::new(r as u64);
        let mut x: Vec<i64> = (0..n)
            .map(|_| g.below(2 * r as u64 + 1) as i64 - r)
            .collect();
        x[0] = -r;
        x[1] = r;
        x[2] = 0;
        // y with x - y in [-R, R] as well.
        let y: Vec<i64> = x
            .iter()
            .map(|&v| {
                let (lo, hi) = ((v - r).max(-r), (v + r).min(r));
                lo + g.below((hi - lo + 1) as u64) as i64
            })
            .collect();
        let enc_ct = |v: &[i64], s: u8| {
            ctx.encrypt_pk_with_seed(&pk, &enc.encode_signed(v, top).unwrap(), &seed(s))
                .unwrap()
        };
        let (cx, cy) = (enc_ct(&x, 1), enc_ct(&y, 2));
        let sign = f.sign(&ev, &cx, &rlk).unwrap();
        assert_eq!(top - sign.level(), f.sign_levels(), "R = {r}");
        let want: Vec<i64> = x.iter().map(|v| v.signum()).collect();
        assert!(dec.decrypt_signed(&sign).unwrap() == want, "sign, R = {r}");
        let lt = f.lt_zero(&ev, &cx, &rlk).unwrap();
        assert_eq!(top - lt.level(), f.lt_levels(), "R = {r}");
        let want: Vec<i64> = x.iter().map(|&v| i64::from(v < 0)).collect();
        assert!(dec.decrypt_signed(&lt).unwrap() == want, "lt_zero, R = {r}");
        let lt = f.lt(&ev, &cx, &cy, &rlk).unwrap();
        let want: Vec<i64> = x.iter().zip(&y).map(|(a, b)| i64::from(a < b)).collect();
        assert!(dec.decrypt_signed(&lt).unwrap() == want, "lt, R = {r}");
        let relu = f.relu(&ev, &cx, &rlk).unwrap();
        assert_eq!(top - relu.level(), f.relu_levels(), "R = {r}");
        let want: Vec<i64> = x.iter().map(|&v| v.max(0)).collect();
        assert!(dec.decrypt_signed(&relu).unwrap() == want, "relu, R = {r}");
    }
    assert!(matches!(
        RangeFunctions::new(40000, t),
        Err(Error::InvalidArgument { .. })
    ));
}
