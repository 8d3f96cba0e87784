//! `clreduce reduce --input FILE`: the user's own data. A `.npy` file (NumPy, 1-D, or 2-D for
//! the segmented `--axis` form, in C or Fortran order; dtype
//! int32, uint32, int64, uint64, float16, float32 or float64 in either byte order) is read with
//! the `npyz` crate; any other file is raw little-endian binary of the `--type` given (bfloat16,
//! which NumPy has no dtype for, comes this way: `--type bf16`). The element type and count
//! come from the file. float16 and bfloat16 are storage types: their 16-bit values go to the
//! device as they are, are read there as f32 (`vload_half`, a shift) and reduced in f32; the
//! host widens a copy exactly to f32 for its reference only. Every problem with the file is a
//! `CliError::Input`, found from the header and the file's size before the data is read.

use crate::error::{CliError, CliResult};
use clreduce::{ElemType, HostVec};
use npyz::{DType, NpyFile, NpyHeader, TypeChar};
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The types a file may hold.
const STORED: &str = "i32, u32, i64, u64, f16 or bf16 (reduced in f32), f32 or f64";

/// An input file whose header (or size) has been checked; its data is not read yet.
pub struct FileInput {
    path: PathBuf,
    /// The NumPy header and where the data starts, or None for raw binary.
    npy: Option<(NpyHeader, u64)>,
    /// The element type in the file (F16 for float16, BF16 for raw bfloat16).
    pub stored: ElemType,
    /// How many elements.
    pub n: u64,
    /// The array's shape (`[n]` for raw binary).
    pub shape: Vec<u64>,
    /// A 2-D `.npy` in Fortran (column-major) order: transposed to row-major when read.
    fortran: bool,
    /// For the `input:` line: the file and its format.
    pub note: String,
}

impl FileInput {
    /// The file's path, for messages.
    pub fn path_display(&self) -> std::path::Display<'_> {
        self.path.display()
    }

    fn err(&self, problem: impl Into<String>) -> CliError {
        bad(&self.path, problem)
    }
}

fn bad(path: &Path, problem: impl Into<String>) -> CliError {
    CliError::Input {
        path: path.to_path_buf(),
        problem: problem.into(),
    }
}

/// The first line of an I/O error, as the file's problem.
fn io_problem(e: &io::Error) -> String {
    e.to_string().lines().next().unwrap_or("").to_string()
}

/// Opens `path` and checks its header (`.npy`) or size (raw) against `--type` and `--n` when
/// they were given; a 2-D `.npy` only where `two_d` (the segmented `--axis` form).
pub fn open(
    path: &Path,
    ty: Option<ElemType>,
    n: Option<u64>,
    two_d: bool,
) -> CliResult<FileInput> {
    let file = open_regular(path)?;
    let meta = file.metadata().map_err(|e| bad(path, io_problem(&e)))?;
    let len = meta.len();
    if len == 0 {
        return Err(bad(path, "the file is empty"));
    }
    let is_npy = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"));
    let input = if is_npy {
        open_npy(path, file, len, two_d)?
    } else {
        open_raw(path, ty, len)?
    };
    if let Some(t) = ty {
        if t != input.stored {
            return Err(input.err(format!(
                "--type {t} conflicts with the file's {} elements; leave --type out",
                input.stored
            )));
        }
    }
    if let Some(n) = n {
        if n != input.n {
            return Err(input.err(format!(
                "--n {n} conflicts with the file's {} elements; leave --n out",
                input.n
            )));
        }
    }
    Ok(input)
}

/// Opens `path` for reading only if it is a regular file, never blocking: a FIFO, a folder, a
/// socket or a device file is refused from its `stat` before any `open()`, and the open itself
/// is non-blocking (`O_NONBLOCK`, on Linux) so that a path swapped for a FIFO in between cannot
/// block either; the opened file is checked again.
fn open_regular(path: &Path) -> CliResult<File> {
    let kind = |m: &std::fs::Metadata| {
        use std::os::unix::fs::FileTypeExt;
        let t = m.file_type();
        if t.is_dir() {
            "a folder"
        } else if t.is_fifo() {
            "a FIFO (named pipe)"
        } else if t.is_socket() {
            "a socket"
        } else if t.is_char_device() || t.is_block_device() {
            "a device file"
        } else {
            "not a regular file"
        }
    };
    let refuse = |m: &std::fs::Metadata| {
        bad(
            path,
            format!(
                "{}: clreduce reads regular files only (copy the data to a file first)",
                kind(m)
            ),
        )
    };
    let meta = std::fs::metadata(path)
        .map_err(|e| bad(path, format!("cannot open: {}", io_problem(&e))))?;
    if !meta.is_file() {
        return Err(refuse(&meta));
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        /// `O_NONBLOCK` on Linux (every architecture Rust supports there but alpha, sparc and
        /// parisc, where clreduce does not run).
        const O_NONBLOCK: i32 = 0o4000;
        opts.custom_flags(O_NONBLOCK);
    }
    let file = opts
        .open(path)
        .map_err(|e| bad(path, format!("cannot open: {}", io_problem(&e))))?;
    let meta = file.metadata().map_err(|e| bad(path, io_problem(&e)))?;
    if !meta.is_file() {
        return Err(refuse(&meta));
    }
    Ok(file)
}

/// The clreduce type of a NumPy dtype, or why it has none.
fn npy_type(dtype: &DType) -> Result<ElemType, String> {
    let DType::Plain(ts) = dtype else {
        return Err(format!(
            "dtype {} is structured; clreduce reduces plain {STORED}",
            dtype.descr()
        ));
    };
    Ok(match (ts.type_char(), ts.size_field()) {
        (TypeChar::Int, 4) => ElemType::I32,
        (TypeChar::Int, 8) => ElemType::I64,
        (TypeChar::Uint, 4) => ElemType::U32,
        (TypeChar::Uint, 8) => ElemType::U64,
        (TypeChar::Float, 2) => ElemType::F16,
        (TypeChar::Float, 4) => ElemType::F32,
        (TypeChar::Float, 8) => ElemType::F64,
        _ => {
            return Err(format!(
                "dtype '{ts}' is not supported; clreduce reduces {STORED}"
            ))
        }
    })
}

fn open_npy(path: &Path, file: File, len: u64, two_d: bool) -> CliResult<FileInput> {
    let mut r = BufReader::new(file);
    let header = NpyHeader::from_reader(&mut r).map_err(|e| {
        bad(
            path,
            format!("not a valid NumPy .npy file: {}", io_problem(&e)),
        )
    })?;
    let offset = r.stream_position().map_err(|e| bad(path, io_problem(&e)))?;
    let stored = npy_type(&header.dtype()).map_err(|m| bad(path, m))?;
    let shape = header.shape().to_vec();
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let dims = dims.join(", ");
    if shape.len() != 1 && !(two_d && shape.len() == 2) {
        return Err(bad(
            path,
            if two_d {
                format!(
                    "shape ({dims}) has {} dimensions; --axis reduces 2-D arrays (reshape it to rows x columns)",
                    shape.len()
                )
            } else {
                format!(
                    "shape ({dims}) has {} dimensions; clreduce reduces 1-D arrays (flatten it with a.ravel()), or 2-D ones per row or column with --axis 1|0",
                    shape.len()
                )
            },
        ));
    }
    if shape.len() == 2 && shape.contains(&0) {
        return Err(bad(
            path,
            format!(
                "shape ({dims}) has no {}",
                if shape[0] == 0 { "rows" } else { "columns" }
            ),
        ));
    }
    let n128: u128 = shape.iter().map(|&d| u128::from(d)).product();
    let Ok(n) = u64::try_from(n128) else {
        return Err(bad(
            path,
            format!("shape ({dims}) has more than 2^64 elements"),
        ));
    };
    let need = n128 * stored.size() as u128;
    let have = len - offset;
    if need > u128::from(have) {
        return Err(bad(
            path,
            format!(
                "truncated: the header promises {n} x {stored} ({need} bytes of data) but {have} bytes follow it"
            ),
        ));
    }
    let fortran = shape.len() == 2 && header.order() == npyz::Order::Fortran;
    let note = format!(
        "from {} (NumPy {}, {}{}{})",
        path.display(),
        header.dtype().descr(),
        if shape.len() == 2 {
            format!("{} x {}", shape[0], shape[1])
        } else {
            format!("{n} elements")
        },
        if fortran { ", Fortran order" } else { "" },
        if stored.is_storage() {
            ", read as f32 on the device"
        } else {
            ""
        }
    );
    Ok(FileInput {
        path: path.to_path_buf(),
        npy: Some((header, offset)),
        stored,
        n,
        shape,
        fortran,
        note,
    })
}

fn open_raw(path: &Path, ty: Option<ElemType>, len: u64) -> CliResult<FileInput> {
    let Some(stored) = ty else {
        return Err(bad(
            path,
            format!("not a .npy file, so raw little-endian binary: give its element type with --type ({STORED})"),
        ));
    };
    let size = stored.size() as u64;
    if !len.is_multiple_of(size) {
        return Err(bad(
            path,
            format!(
                "{len} bytes is not a multiple of the {stored} size ({size} bytes): not raw {stored} data"
            ),
        ));
    }
    let n = len / size;
    let note = format!(
        "from {} (raw little-endian {stored}, {n} elements{})",
        path.display(),
        if stored.is_storage() {
            ", read as f32 on the device"
        } else {
            ""
        }
    );
    Ok(FileInput {
        path: path.to_path_buf(),
        npy: None,
        stored,
        n,
        shape: vec![n],
        fortran: false,
        note,
    })
}

impl FileInput {
    /// Reads the data: the values (f16 and bf16 widened exactly to f32, for the host's
    /// reference) and, for f16 and bf16, the 16-bit values as stored (for the device).
    pub fn read(&self) -> CliResult<(HostVec, Option<Vec<u16>>)> {
        let f = open_regular(&self.path)?;
        let r = match &self.npy {
            Some((header, offset)) => self.read_npy(f, header, *offset),
            None => self.read_raw(f),
        };
        let mut data = r.map_err(|e| self.err(format!("reading the data: {}", io_problem(&e))))?;
        if self.fortran {
            // Column-major in the file: element (i, j) at j·R + i; row-major here.
            let (r, c) = (self.shape[0] as usize, self.shape[1] as usize);
            data = match data {
                Loaded::Values(v) => Loaded::Values(v.transposed(c, r)),
                Loaded::Bits(b) => Loaded::Bits(transpose(&b, c, r)),
            };
        }
        Ok(match data {
            Loaded::Values(v) => (v, None),
            Loaded::Bits(bits) => (widen(self.stored, &bits), Some(bits)),
        })
    }

    fn read_npy(&self, f: File, header: &NpyHeader, offset: u64) -> io::Result<Loaded> {
        let mut f = BufReader::with_capacity(1 << 20, f);
        f.seek(SeekFrom::Start(offset))?;
        let npy = NpyFile::with_header(header.clone(), f);
        Ok(Loaded::Values(match self.stored {
            ElemType::I32 => HostVec::I32(npy.into_vec()?),
            ElemType::U32 => HostVec::U32(npy.into_vec()?),
            ElemType::I64 => HostVec::I64(npy.into_vec()?),
            ElemType::U64 => HostVec::U64(npy.into_vec()?),
            ElemType::F32 => HostVec::F32(npy.into_vec()?),
            ElemType::F64 => HostVec::F64(npy.into_vec()?),
            ElemType::F16 => {
                return Ok(Loaded::Bits(
                    npy.data::<npyz::half::f16>()
                        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?
                        .map(|h| h.map(|h| h.to_bits()))
                        .collect::<io::Result<Vec<u16>>>()?,
                ))
            }
            ElemType::BF16 => unreachable!("NumPy has no bfloat16 dtype (npy_type)"),
        }))
    }

    fn read_raw(&self, f: File) -> io::Result<Loaded> {
        let n = self.n as usize;
        Ok(Loaded::Values(match self.stored {
            ElemType::I32 => HostVec::I32(raw(f, n, i32::from_le_bytes)?),
            ElemType::U32 => HostVec::U32(raw(f, n, u32::from_le_bytes)?),
            ElemType::I64 => HostVec::I64(raw(f, n, i64::from_le_bytes)?),
            ElemType::U64 => HostVec::U64(raw(f, n, u64::from_le_bytes)?),
            ElemType::F32 => HostVec::F32(raw(f, n, f32::from_le_bytes)?),
            ElemType::F64 => HostVec::F64(raw(f, n, f64::from_le_bytes)?),
            ElemType::F16 | ElemType::BF16 => {
                return Ok(Loaded::Bits(raw(f, n, u16::from_le_bytes)?))
            }
        }))
    }
}

/// What a file holds once read: values, or 16-bit storage values (f16, bf16) as stored.
enum Loaded {
    Values(HostVec),
    Bits(Vec<u16>),
}

/// The row-major `cols x rows` transpose of a row-major `rows x cols` array.
fn transpose<T: Copy>(v: &[T], rows: usize, cols: usize) -> Vec<T> {
    let mut out = Vec::with_capacity(v.len());
    for j in 0..cols {
        out.extend((0..rows).map(|i| v[i * cols + j]));
    }
    out
}

trait Transposed {
    fn transposed(self, rows: usize, cols: usize) -> Self;
}

impl Transposed for HostVec {
    fn transposed(self, rows: usize, cols: usize) -> HostVec {
        match self {
            HostVec::I32(d) => HostVec::I32(transpose(&d, rows, cols)),
            HostVec::U32(d) => HostVec::U32(transpose(&d, rows, cols)),
            HostVec::I64(d) => HostVec::I64(transpose(&d, rows, cols)),
            HostVec::U64(d) => HostVec::U64(transpose(&d, rows, cols)),
            HostVec::F32(d) => HostVec::F32(transpose(&d, rows, cols)),
            HostVec::F64(d) => HostVec::F64(transpose(&d, rows, cols)),
        }
    }
}

/// 16-bit storage values widened exactly to f32 (the host's reference data).
pub fn widen(stored: ElemType, bits: &[u16]) -> HostVec {
    HostVec::F32(match stored {
        ElemType::BF16 => bits.iter().map(|&b| clreduce::Bf16(b).to_f32()).collect(),
        _ => bits.iter().map(|&b| clreduce::Half(b).to_f32()).collect(),
    })
}

/// `n` little-endian elements of `W` bytes each, read in blocks.
fn raw<T, const W: usize>(f: File, n: usize, conv: impl Fn([u8; W]) -> T) -> io::Result<Vec<T>> {
    let mut out = Vec::with_capacity(n);
    let mut r = BufReader::new(f);
    let mut block = vec![0u8; W * 16384];
    while out.len() < n {
        let k = (n - out.len()).min(16384);
        let bytes = &mut block[..k * W];
        r.read_exact(bytes)?;
        out.extend(bytes.chunks_exact(W).map(|c| {
            let mut a = [0u8; W];
            a.copy_from_slice(c);
            conv(a)
        }));
    }
    Ok(out)
}
