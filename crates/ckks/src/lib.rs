//! ckks
