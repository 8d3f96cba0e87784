//! Input files for the CLI tests (tests/cli.rs): a scratch folder per test process, NumPy .npy
//! files written by hand from the format's specification (independent of the crate the CLI
//! reads them with), and the bits of an f16.

/// A scratch folder for this test process's input files.
pub fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("clreduce-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create a scratch folder");
    dir
}

/// A NumPy .npy file (format 1.0) written by hand from its specification: magic, version,
/// header length, the header dict padded to 64 bytes, then `data`. Independent of the crate
/// the CLI reads it with.
pub fn npy(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
    // A structured dtype's descr is a list, a plain one a quoted string.
    let descr = if descr.starts_with('[') {
        descr.to_string()
    } else {
        format!("'{descr}'")
    };
    let dict = format!("{{'descr': {descr}, 'fortran_order': False, 'shape': {shape}, }}");
    let pad = (64 - (10 + dict.len() + 1) % 64) % 64;
    let header = format!("{dict}{}\n", " ".repeat(pad));
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.as_bytes());
    out.extend(data);
    out
}

/// The bits of an f16 that holds `v` exactly (normal values only).
pub fn f16_bits(v: f32) -> u16 {
    if v == 0.0 {
        return 0;
    }
    let b = v.to_bits();
    let exp = ((b >> 23) & 0xff) as i32 - 127 + 15;
    assert!(
        exp > 0 && exp < 31 && b & 0x1fff == 0,
        "{v} is not an exact f16"
    );
    ((b >> 16) & 0x8000) as u16 | (exp as u16) << 10 | ((b >> 13) & 0x3ff) as u16
}
