//! NVRTC compilation of one source string into a CUBIN (device machine code).
//!
//! Compiling for a real architecture (`--gpu-architecture=sm_XY`) makes NVRTC run the
//! assembler itself; taking its CUBIN, rather than its PTX, spares the driver a second
//! assembly of the same code when the module is loaded (a PTX image is JIT-compiled by the
//! driver at `cuModuleLoadData`), and gives bytes that can be cached on disk
//! ([`crate::kernel_cache`]).

use cudarc::nvrtc::{result, sys};
use std::ffi::{CStr, CString};

/// The loaded NVRTC library's version, `(major, minor)`.
pub fn version() -> Result<(i32, i32), String> {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: nvrtcVersion(int* major, int* minor) writes two ints; both pointers are valid.
    unsafe { sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .map_err(|e| format!("nvrtcVersion failed: {e:?}"))?;
    Ok((major, minor))
}

/// An NVRTC program, destroyed on drop (also on every error path).
struct Program(sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: self.0 came from nvrtcCreateProgram and is destroyed only here.
        let _ = unsafe { result::destroy_program(self.0) };
    }
}

/// Compiles `src` (named `name` in diagnostics) with `options`, which must name a real
/// architecture (`--gpu-architecture=sm_XY`), and returns the CUBIN. The error is the
/// compiler's log (or the failing NVRTC call).
pub fn compile_cubin(src: &str, name: &str, options: &[String]) -> Result<Vec<u8>, String> {
    let c_src = CString::new(src).map_err(|_| "the source contains a NUL byte".to_string())?;
    let c_name = CString::new(name).map_err(|_| "the name contains a NUL byte".to_string())?;
    if options.iter().any(|o| o.contains('\0')) {
        return Err("an option contains a NUL byte".into());
    }
    let prog = Program(
        result::create_program(&c_src, Some(&c_name))
            .map_err(|e| format!("nvrtcCreateProgram failed: {e:?}"))?,
    );
    // SAFETY: prog.0 is a live program; c_src and c_name outlive it (dropped after `prog`).
    if let Err(e) = unsafe { result::compile_program(prog.0, options) } {
        // SAFETY: as above; the log is NUL-terminated by NVRTC.
        let log = unsafe { result::get_program_log(prog.0) }
            .map(|l| {
                // SAFETY: `l` holds the NUL-terminated log NVRTC wrote.
                unsafe { CStr::from_ptr(l.as_ptr()) }
                    .to_string_lossy()
                    .into_owned()
            })
            .unwrap_or_default();
        return Err(format!("{e:?}: {log}"));
    }
    let mut size = 0usize;
    // SAFETY: nvrtcGetCUBINSize(nvrtcProgram, size_t*) on a compiled program; `size` is valid.
    unsafe { sys::nvrtcGetCUBINSize(prog.0, &mut size) }
        .result()
        .map_err(|e| format!("nvrtcGetCUBINSize failed: {e:?}"))?;
    if size == 0 {
        return Err("NVRTC produced no CUBIN (is the architecture a real sm_XY?)".into());
    }
    let mut cubin = vec![0u8; size];
    // SAFETY: nvrtcGetCUBIN(nvrtcProgram, char*) writes exactly `size` bytes, the buffer's length.
    unsafe { sys::nvrtcGetCUBIN(prog.0, cubin.as_mut_ptr().cast()) }
        .result()
        .map_err(|e| format!("nvrtcGetCUBIN failed: {e:?}"))?;
    // `prog` is dropped before `c_src` and `c_name` (reverse order of declaration).
    Ok(cubin)
}
