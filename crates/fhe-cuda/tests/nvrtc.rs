//! Every kernel module compiles with NVRTC for sm_90 (needs only libnvrtc, no GPU).
//! Run in CI by `crates/fhe-cuda/ci-nvrtc.sh`.

/// Every unit of the module compiles to an ELF CUBIN holding its kernels (every kernel is named
/// `module_verb`).
fn compile(module: &str) {
    let cubins = fhe_cuda::kernels::compile(module, "sm_90").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        cubins.len(),
        fhe_cuda::kernels::units(module).unwrap().len()
    );
    let prefix = format!("{module}_");
    for cubin in cubins {
        assert!(cubin.starts_with(b"\x7fELF"), "{module}: not an ELF CUBIN");
        assert!(
            cubin.windows(prefix.len()).any(|w| w == prefix.as_bytes()),
            "{module}: a unit without a kernel named {prefix}*"
        );
    }
}

#[test]
#[ignore = "needs NVRTC"]
fn nvrtc_ntt() {
    compile("ntt");
}

#[test]
#[ignore = "needs NVRTC"]
fn nvrtc_elementwise() {
    compile("elementwise");
}

#[test]
#[ignore = "needs NVRTC"]
fn nvrtc_keyswitch() {
    compile("keyswitch");
}

#[test]
#[ignore = "needs NVRTC"]
fn nvrtc_automorphism() {
    compile("automorphism");
}

#[test]
#[ignore = "needs NVRTC"]
fn nvrtc_sampler() {
    compile("sampler");
}

#[test]
#[ignore = "needs NVRTC"]
fn nvrtc_scale_round() {
    compile("scale_round");
}

#[test]
#[ignore = "needs NVRTC"]
fn nvrtc_decode() {
    compile("decode");
}

#[test]
#[ignore = "needs NVRTC"]
fn nvrtc_lincomb() {
    compile("lincomb");
}

#[test]
fn every_module_has_a_source() {
    for m in fhe_cuda::kernels::MODULES {
        assert!(
            fhe_cuda::kernels::source(m).is_some_and(|s| !s.contains("#include \"")),
            "{m}"
        );
    }
    assert!(fhe_cuda::kernels::compile("nope", "sm_90").is_err());
}

/// Without a driver or device, opening one is an error value, never a panic.
#[test]
fn missing_device_is_an_error() {
    match fhe_cuda::Device::new(0) {
        Ok(d) => assert!(!d.name().is_empty()),
        Err(e) => assert!(
            matches!(
                e,
                fhe_cuda::Error::NoDriver
                    | fhe_cuda::Error::NoDevice { .. }
                    | fhe_cuda::Error::NoNvrtc
            ),
            "{e}"
        ),
    }
}

#[test]
#[ignore = "needs NVRTC"]
fn nvrtc_blind_rotate() {
    compile("blind_rotate");
}

#[test]
#[ignore = "needs NVRTC"]
fn nvrtc_rns_blind_rotate() {
    compile("rns_blind_rotate");
}
