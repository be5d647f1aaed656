//! What the CKKS integration tests share: a CPU context with its encoder, evaluator and keys.

use ckks::{Context, Encoder, Evaluator, Parameters, ParametersLiteral};
use fhe_math::cpu::CpuBackend;
use rlwe::{PublicKey, RelinKey, SecretKey};

/// The backend of these tests.
pub type Be = CpuBackend;

/// A CPU context at one parameter set, with fresh keys.
pub struct Setup {
    pub ctx: Context<Be>,
    pub enc: Encoder<Be>,
    pub eval: Evaluator<Be>,
    pub sk: SecretKey<Be>,
    pub pk: PublicKey<Be>,
    pub rlk: RelinKey<Be>,
}

/// Context, encoder, evaluator, secret, public and relinearization keys for `lit`.
pub fn setup(lit: &ParametersLiteral) -> Setup {
    let ctx = Context::cpu(Parameters::new(lit).unwrap()).unwrap();
    let kg = ctx.key_generator();
    let sk = kg.secret_key().unwrap();
    let pk = kg.public_key(&sk).unwrap();
    let rlk = kg.relin_key(&sk).unwrap();
    Setup {
        enc: Encoder::new(&ctx).unwrap(),
        eval: Evaluator::new(&ctx).unwrap(),
        ctx,
        sk,
        pk,
        rlk,
    }
}
