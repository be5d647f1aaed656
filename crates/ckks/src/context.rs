//! [`Context`]: CKKS parameters bound to a backend.

use crate::error::Result;
use crate::params::Parameters;
use fhe_math::backend::Backend;
use fhe_math::cpu::CpuBackend;
use fhe_math::ring::RingContext;
use std::sync::Arc;

/// The RNS ring of a CKKS parameter set (primes, NTT tables, key-switching tables).
pub fn ring_for(params: &Parameters) -> Result<Arc<RingContext>> {
    Ok(RingContext::new(
        params.n(),
        params.moduli_q(),
        params.moduli_p(),
        params.digits(),
    )?)
}

/// CKKS parameters with the backend that computes on them.
#[derive(Clone)]
pub struct Context<B: Backend> {
    params: Arc<Parameters>,
    backend: B,
}

impl Context<CpuBackend> {
    /// A context on the CPU backend.
    pub fn cpu(params: Arc<Parameters>) -> Result<Self> {
        let ring = ring_for(&params)?;
        Ok(Context {
            params,
            backend: CpuBackend::new(ring),
        })
    }
}

impl<B: Backend> Context<B> {
    /// A context on an already built backend; the backend's ring must be this parameter set's.
    pub fn with_backend(params: Arc<Parameters>, backend: B) -> Result<Self> {
        let same = rlwe::chain::ring_matches(
            backend.ring(),
            params.n(),
            params.moduli_q(),
            params.moduli_p(),
        );
        if !same {
            return Err(crate::error::Error::BackendMismatch);
        }
        Ok(Context { params, backend })
    }

    /// The parameters.
    pub fn params(&self) -> &Arc<Parameters> {
        &self.params
    }

    /// The backend.
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// A key generator for this context.
    pub fn key_generator(&self) -> rlwe::KeyGenerator<'_, B> {
        rlwe::KeyGenerator::new(&self.backend, self.params.fingerprint())
    }
}
