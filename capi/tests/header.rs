//! `include/commcost.h` is what cbindgen generates from `src/ffi.rs` now.
//! `COMMCOST_BLESS=1 cargo test -p commcost-capi --test header` rewrites it.

use std::path::Path;

#[test]
fn committed_header_is_current() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut generated);
    let generated = String::from_utf8(generated).expect("UTF-8 header");
    let path = dir.join("include/commcost.h");
    if std::env::var_os("COMMCOST_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write the header");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/commcost.h is out of date; rerun with COMMCOST_BLESS=1"
    );
}

/// The header is C89 (no `//` comments), includes twice, and compiles as C++ (the `extern "C"`
/// block closes inside the include guard).
#[test]
fn header_is_c89_and_cxx() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let include = dir.join("include");
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("header-c89");
    std::fs::create_dir_all(&scratch).expect("scratch dir");
    let source =
        "#include \"commcost.h\"\n#include \"commcost.h\"\nint main(void) { return CC_OK; }\n";
    for (compiler, file, flags) in [
        ("cc", "h.c", &["-std=c89", "-pedantic-errors"][..]),
        ("c++", "h.cpp", &["-std=c++11"][..]),
    ] {
        let path = scratch.join(file);
        std::fs::write(&path, source).expect("write the source");
        let out = std::process::Command::new(compiler)
            .args(flags)
            .arg("-fsyntax-only")
            .arg("-I")
            .arg(&include)
            .arg(&path)
            .output()
            .unwrap_or_else(|e| panic!("{compiler}: {e}"));
        assert!(
            out.status.success(),
            "{compiler} {flags:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
