//! Inlines local `#include "x.cuh"` lines of `kernels/*.cu` (NVRTC gets no include paths from
//! cudarc) and writes the self-contained sources to `OUT_DIR`, where `src/kernels/mod.rs`
//! embeds them with `include_str!`.

use std::collections::HashSet;
use std::path::Path;
use std::{env, fs};

fn inline(path: &Path, seen: &mut HashSet<String>, out: &mut String) {
    let dir = path.parent().expect("kernel path has a parent");
    let text =
        fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("#include \"") {
            let name = rest.trim_end_matches('"');
            let inc = dir.join(name);
            println!("cargo:rerun-if-changed={}", inc.display());
            // Each header once (they also carry #pragma once).
            if seen.insert(name.to_string()) {
                out.push_str(&format!("// ---- begin {name}\n"));
                inline(&inc, seen, out);
                out.push_str(&format!("// ---- end {name}\n"));
            }
        } else if t == "#pragma once" {
            continue;
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
}

fn main() {
    let out_dir = env::var("OUT_DIR").expect("OUT_DIR is set by cargo");
    let kernels = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
    println!("cargo:rerun-if-changed={}", kernels.display());
    for name in [
        "ntt",
        "elementwise",
        "keyswitch",
        "automorphism",
        "sampler",
        "scale_round",
        "decode",
        "lincomb",
        "blind_rotate",
        "rns_blind_rotate",
    ] {
        let path = kernels.join(format!("{name}.cu"));
        println!("cargo:rerun-if-changed={}", path.display());
        let mut src = String::new();
        inline(&path, &mut HashSet::new(), &mut src);
        fs::write(Path::new(&out_dir).join(format!("{name}.cu")), src)
            .expect("write inlined kernel source");
    }
}
