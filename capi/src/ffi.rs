//! The `extern "C"` functions. Every entry point runs its body inside `catch_unwind`, checks
//! every pointer for NULL and every enum code for range, and reports failures as a status code
//! with a thread-local message ([`cc_last_error`]); no panic and no undefined behaviour crosses
//! the boundary.
#![allow(unsafe_code)]

use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use commcost::{CommModel, ModelSpec};

use crate::core::{self, Choice, Collective, CoreError, Family, Table};
use commcost::collectives::OmpiSetting;
use commcost::table::Table1D;

/// Success.
pub const CC_OK: i32 = 0;
/// A pointer argument was NULL.
pub const CC_ERR_NULL_POINTER: i32 = 1;
/// An argument out of its range: an unknown family or collective code, a text that is not
/// UTF-8, an invalid message layout, an empty or unsorted table axis.
pub const CC_ERR_INVALID_ARGUMENT: i32 = 2;
/// A file could not be opened or read.
pub const CC_ERR_IO: i32 = 3;
/// A model file or JSON text is not a valid model.
pub const CC_ERR_PARSE: i32 = 4;
/// An unknown preset, or an unknown or malformed algorithm name (`pipelined:segment=0`).
pub const CC_ERR_UNKNOWN_NAME: i32 = 5;
/// The collective has no algorithms in the family (scan in Open MPI's, reduce_scatter in the
/// textbook one).
pub const CC_ERR_UNSUPPORTED: i32 = 6;
/// The collective cannot be priced (0 processes, an algorithm that cannot run on `P`).
pub const CC_ERR_COLLECTIVE: i32 = 7;
/// The output array is too small; the count needed was written.
pub const CC_ERR_BUFFER_TOO_SMALL: i32 = 8;
/// A bug: the library panicked; the panic was caught at the boundary.
pub const CC_ERR_PANIC: i32 = 9;

/// Family code: Open MPI's tuned component, with Open MPI's algorithm IDs.
pub const CC_FAMILY_OMPI: i32 = 0;
/// Family code: the textbook algorithms (Thakur, Rabenseifner & Gropp 2005).
pub const CC_FAMILY_TEXTBOOK: i32 = 1;
/// Family code: the textbook algorithms MPICH runs, under MPICH's names.
pub const CC_FAMILY_MPICH: i32 = 2;

/// Collective code: `MPI_Bcast`.
pub const CC_BCAST: i32 = 0;
/// Collective code: `MPI_Allreduce`.
pub const CC_ALLREDUCE: i32 = 1;
/// Collective code: `MPI_Reduce`.
pub const CC_REDUCE: i32 = 2;
/// Collective code: `MPI_Allgather`.
pub const CC_ALLGATHER: i32 = 3;
/// Collective code: `MPI_Alltoall`.
pub const CC_ALLTOALL: i32 = 4;
/// Collective code: `MPI_Barrier`.
pub const CC_BARRIER: i32 = 5;
/// Collective code: `MPI_Reduce_scatter` (Open MPI family only).
pub const CC_REDUCE_SCATTER: i32 = 6;
/// Collective code: `MPI_Gather`.
pub const CC_GATHER: i32 = 7;
/// Collective code: `MPI_Scatter`.
pub const CC_SCATTER: i32 = 8;
/// Collective code: `MPI_Scan` (textbook family only).
pub const CC_SCAN: i32 = 9;

/// Capacity of [`CcAlgorithm::name`] including the terminating NUL.
pub const CC_NAME_CAPACITY: usize = 96;
/// Capacity of [`CcAlgorithm::ompi_name`] and [`CcAlgorithm::mpich_name`] including the NUL.
pub const CC_SHORT_NAME_CAPACITY: usize = 48;

/// An immutable model (any model of commcost). Thread-safe: any number of threads may call the
/// functions that take a `const CcModel *` at the same time.
#[derive(Debug)]
pub struct CcModel {
    spec: ModelSpec,
}

/// A decision table computed once by [`cc_table_build`]; immutable and thread-safe.
#[derive(Debug)]
pub struct CcTable {
    table: Table,
    cells: Vec<CcAlgorithm>,
}

/// The five per-message quantities of a model, seconds.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct CcQuantities {
    /// End-to-end time of the message.
    pub p2p: f64,
    /// CPU time of the sender (LogP's `o` at the sender).
    pub send_overhead: f64,
    /// CPU time of the receiver.
    pub recv_overhead: f64,
    /// Minimum time between the starts of two consecutive sends (LogGP `max(o, g + (s-1)G)`).
    pub send_interval: f64,
    /// Idle gap between successive messages (LogP's `g`).
    pub gap: f64,
}

/// One algorithm of a collective: its names in commcost, Open MPI and MPICH, and its cost.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CcAlgorithm {
    /// Predicted time, seconds.
    pub cost: f64,
    /// Open MPI's algorithm ID (`--mca coll_tuned_<coll>_algorithm N`, the rules file), 0 in
    /// the textbook family.
    pub ompi_id: u32,
    /// Open MPI's segment size in bytes (0 = unsegmented); 0 in the textbook family.
    pub segment: u64,
    /// Open MPI's chain fan-out (the rules file's `faninout`), 0 where the algorithm has none.
    pub fanout: u64,
    /// commcost's name with parameters, NUL-terminated (`chain:segment=8192,fanout=4`); the same
    /// text names the algorithm in [`cc_collective_cost`].
    pub name: [c_char; CC_NAME_CAPACITY],
    /// Open MPI's name (`split_binary_tree`), empty in the textbook family.
    pub ompi_name: [c_char; CC_SHORT_NAME_CAPACITY],
    /// MPICH's name (`MPIR_CVAR_<COLL>_INTRA_ALGORITHM`: `scatter_ring_allgather`), empty where
    /// MPICH runs no such algorithm.
    pub mpich_name: [c_char; CC_SHORT_NAME_CAPACITY],
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_error(message: &str) {
    // an interior NUL cannot be shown by C; replace it
    let text = CString::new(message.replace('\0', "\\0")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = text);
}

/// A failure: the status code and its message.
struct Failure(i32, String);

impl From<CoreError> for Failure {
    fn from(e: CoreError) -> Self {
        let code = match e {
            CoreError::InvalidArgument(_) => CC_ERR_INVALID_ARGUMENT,
            CoreError::Io(_) => CC_ERR_IO,
            CoreError::Parse(_) => CC_ERR_PARSE,
            CoreError::UnknownName(_) => CC_ERR_UNKNOWN_NAME,
            CoreError::Unsupported(_) => CC_ERR_UNSUPPORTED,
            CoreError::Collective(_) => CC_ERR_COLLECTIVE,
        };
        Failure(code, e.to_string())
    }
}

/// The largest size, count or process count taken: `2^63 - 1`. Above it a value is refused
/// rather than read as a huge size: a Fortran caller's negative `integer(c_int64_t)` arrives
/// as one.
const MAX_ARG: u64 = i64::MAX as u64;

/// Refuses any of `args` (name, value) above [`MAX_ARG`], naming it.
fn in_range(args: &[(&str, u64)]) -> Result<(), Failure> {
    match args.iter().find(|(_, v)| *v > MAX_ARG) {
        Some((name, v)) => Err(Failure(
            CC_ERR_INVALID_ARGUMENT,
            format!(
                "{name}: {v} is above 2^63 - 1 (a negative integer(c_int64_t) from Fortran \
                 arrives as one)"
            ),
        )),
        None => Ok(()),
    }
}

fn null(what: &str) -> Failure {
    Failure(CC_ERR_NULL_POINTER, format!("{what}: NULL pointer"))
}

/// Runs `body` with panics caught; records the message of a failure.
fn guard(body: impl FnOnce() -> Result<(), Failure>) -> i32 {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => {
            // clearing allocates nothing when there is no message (the hot path)
            LAST_ERROR.with(|e| {
                if !e.borrow().is_empty() {
                    *e.borrow_mut() = CString::default();
                }
            });
            CC_OK
        }
        Ok(Err(Failure(code, message))) => {
            set_error(&message);
            code
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            set_error(&format!(
                "internal error (panic caught at the C boundary): {what}"
            ));
            CC_ERR_PANIC
        }
    }
}

fn model_ref<'a>(model: *const CcModel) -> Result<&'a dyn CommModel, Failure> {
    // SAFETY: a non-NULL `model` was returned by one of the `cc_model_*` constructors (a
    // `Box<CcModel>` leaked with `Box::into_raw`) and not yet passed to `cc_model_free`: the
    // documented contract of every function taking a `const CcModel *`. It is only read.
    unsafe { model.as_ref() }
        .map(|m| m.spec.as_model())
        .ok_or_else(|| null("model"))
}

fn text<'a>(ptr: *const c_char, what: &str) -> Result<&'a str, Failure> {
    if ptr.is_null() {
        return Err(null(what));
    }
    // SAFETY: `ptr` is non-NULL and, by the contract of the function, points to a
    // NUL-terminated string that stays valid during the call.
    unsafe { CStr::from_ptr(ptr) }
        .to_str()
        .map_err(|_| Failure(CC_ERR_INVALID_ARGUMENT, format!("{what}: not valid UTF-8")))
}

fn write_out<T>(out: *mut T, value: T, what: &str) -> Result<(), Failure> {
    if out.is_null() {
        return Err(null(what));
    }
    // SAFETY: `out` is non-NULL and, by the contract of the function, points to writable
    // memory for one `T`, suitably aligned. `write` does not read or drop the old value.
    unsafe { out.write(value) };
    Ok(())
}

fn slice<'a, T>(ptr: *const T, len: usize, what: &str) -> Result<&'a [T], Failure> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(null(what));
    }
    if len > isize::MAX as usize / std::mem::size_of::<T>().max(1) {
        return Err(Failure(
            CC_ERR_INVALID_ARGUMENT,
            format!("{what}: length {len} too large"),
        ));
    }
    // SAFETY: `ptr` is non-NULL and, by the contract of the function, points to `len`
    // initialised, aligned `T` that are not written during the call; the byte length fits an
    // isize (checked above).
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

fn copy_name<const N: usize>(dst: &mut [c_char; N], src: &str, what: &str) -> Result<(), Failure> {
    let bytes = src.as_bytes();
    if bytes.len() >= N || bytes.contains(&0) {
        return Err(Failure(
            CC_ERR_INVALID_ARGUMENT,
            format!("{what}: `{src}` does not fit in {} bytes", N - 1),
        ));
    }
    for (d, &b) in dst.iter_mut().zip(bytes) {
        *d = b as c_char;
    }
    dst[bytes.len()] = 0;
    Ok(())
}

fn record(choice: &Choice) -> Result<CcAlgorithm, Failure> {
    let ompi = choice.ompi.unwrap_or(OmpiSetting {
        id: 0,
        name: "",
        segment: 0,
        fanout: 0,
    });
    let mut r = CcAlgorithm {
        cost: choice.cost,
        ompi_id: ompi.id,
        segment: ompi.segment,
        fanout: ompi.fanout,
        name: [0; CC_NAME_CAPACITY],
        ompi_name: [0; CC_SHORT_NAME_CAPACITY],
        mpich_name: [0; CC_SHORT_NAME_CAPACITY],
    };
    copy_name(&mut r.name, &choice.name, "name")?;
    copy_name(&mut r.ompi_name, ompi.name, "ompi_name")?;
    copy_name(
        &mut r.mpich_name,
        choice.mpich_name.unwrap_or(""),
        "mpich_name",
    )?;
    Ok(r)
}

fn family_and_collective(family: i32, collective: i32) -> Result<(Family, Collective), Failure> {
    Ok((
        core::family_from_code(family)?,
        core::collective_from_code(collective)?,
    ))
}

fn new_model(spec: ModelSpec, out: *mut *mut CcModel) -> Result<(), Failure> {
    if out.is_null() {
        return Err(null("out"));
    }
    let handle = Box::into_raw(Box::new(CcModel { spec }));
    write_out(out, handle, "out")
}

/// The message of the last failure on the calling thread, NUL-terminated; empty after a
/// success. Valid until the next `cc_*` call on the same thread; never NULL.
#[unsafe(no_mangle)]
pub extern "C" fn cc_last_error() -> *const c_char {
    catch_unwind(|| LAST_ERROR.with(|e| e.borrow().as_ptr())).unwrap_or(c"internal error".as_ptr())
}

/// The library's version, NUL-terminated, static.
#[unsafe(no_mangle)]
pub extern "C" fn cc_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// Loads the embedded parameter set `name` (`open-mpi-openib`, `open-mpi-gm`, `mpich2-tcp`,
/// `nmpi-sci`, `titan-log3p`; `commcost presets` lists them) into `*out`. Free it with
/// [`cc_model_free`].
///
/// Returns `CC_OK`, `CC_ERR_NULL_POINTER`, `CC_ERR_INVALID_ARGUMENT` (not UTF-8) or
/// `CC_ERR_UNKNOWN_NAME`.
///
/// # Safety
///
/// `name` is NULL or a NUL-terminated string; `out` is NULL or points to writable storage for a
/// pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_model_preset(name: *const c_char, out: *mut *mut CcModel) -> i32 {
    guard(|| {
        let name = text(name, "name")?;
        new_model(core::preset(name)?, out)
    })
}

/// Loads a model file into `*out`, read as the `commcost` command reads `--model`: a `ModelSpec`
/// JSON document (`{"model": "loggp", ...}`), a model file as `commcost calibrate` writes it, or
/// a file of several named models (`path` may be `FILE#NAME`; without a name the preferred
/// one). A regular file of at most 16 MiB (a FIFO or device is refused before reading); a key
/// given twice is refused; every parameter is validated as the Rust constructors validate it;
/// the error message names the file, the model and the field.
///
/// Returns `CC_OK`, `CC_ERR_NULL_POINTER`, `CC_ERR_INVALID_ARGUMENT`, `CC_ERR_IO` or
/// `CC_ERR_PARSE`.
///
/// # Safety
///
/// As [`cc_model_preset`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_model_load(path: *const c_char, out: *mut *mut CcModel) -> i32 {
    guard(|| {
        let path = text(path, "path")?;
        new_model(core::model_from_file(Path::new(path))?, out)
    })
}

/// A LogGP model (Alexandrov, Ionescu, Schauser, Scheiman, "LogGP: Incorporating Long
/// Messages into the LogP Model", SPAA 1995) into `*out`: latency `L`, overhead `o`, gap `g`
/// (seconds) and gap per byte `G` (seconds per byte); `p2p(s) = 2o + L + (s - 1) G`. The
/// parameters are validated as `commcost::LogGP::new` validates them (finite, at least 0).
///
/// Returns `CC_OK`, `CC_ERR_NULL_POINTER` or `CC_ERR_INVALID_ARGUMENT` naming the parameter.
///
/// # Safety
///
/// `out` is NULL or points to writable storage for a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_loggp_new(
    latency: f64,
    overhead: f64,
    gap: f64,
    gap_per_byte: f64,
    out: *mut *mut CcModel,
) -> i32 {
    guard(|| {
        let m = commcost::LogGP::new(latency, overhead, gap, gap_per_byte).map_err(invalid)?;
        new_model(m.into(), out)
    })
}

/// A LogP model (Culler et al., "LogP: Towards a Realistic Model of Parallel Computation",
/// PPoPP 1993) into `*out`: latency `L`, overhead `o`, gap `g` (seconds) and the bytes of one
/// word (a message of `s` bytes is `⌈s / word_bytes⌉` words), validated as `commcost::LogP::new`
/// validates them.
///
/// Returns `CC_OK`, `CC_ERR_NULL_POINTER` or `CC_ERR_INVALID_ARGUMENT` naming the parameter.
///
/// # Safety
///
/// As [`cc_loggp_new`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_logp_new(
    latency: f64,
    overhead: f64,
    gap: f64,
    word_bytes: u64,
    out: *mut *mut CcModel,
) -> i32 {
    guard(|| {
        in_range(&[("word_bytes", word_bytes)])?;
        let m = commcost::LogP::new(latency, overhead, gap, word_bytes).map_err(invalid)?;
        new_model(m.into(), out)
    })
}

/// A PRAM model into `*out`: every message costs `unit_cost` seconds, whatever its size
/// (`commcost::Pram::new` validates it).
///
/// Returns `CC_OK`, `CC_ERR_NULL_POINTER` or `CC_ERR_INVALID_ARGUMENT` naming the parameter.
///
/// # Safety
///
/// As [`cc_loggp_new`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_pram_new(unit_cost: f64, out: *mut *mut CcModel) -> i32 {
    guard(|| new_model(commcost::Pram::new(unit_cost).map_err(invalid)?.into(), out))
}

/// An Mlines model (`commcost::MlinesModel`, the per-message cost of the Mlines paper's eq. (2))
/// into `*out`: `p2p = per_message + per_byte b + per_line Mlines`, `Mlines` the distinct
/// `line_bytes`-byte memory lines the message touches; validated as `MlinesModel::new` does.
///
/// Returns `CC_OK`, `CC_ERR_NULL_POINTER` or `CC_ERR_INVALID_ARGUMENT` naming the parameter.
///
/// # Safety
///
/// As [`cc_loggp_new`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_mlines_new(
    per_message: f64,
    per_byte: f64,
    per_line: f64,
    line_bytes: u64,
    out: *mut *mut CcModel,
) -> i32 {
    guard(|| {
        in_range(&[("line_bytes", line_bytes)])?;
        let m = commcost::MlinesModel::new(per_message, per_byte, per_line, line_bytes)
            .map_err(invalid)?;
        new_model(m.into(), out)
    })
}

/// A pLogP model (Kielmann, Bal, Verstoep, "Fast Measurement of LogP Parameters for Message
/// Passing Platforms", IPDPS 2000) into `*out`: latency `L` (seconds) and the send overhead
/// `o_s(m)`, receive overhead `o_r(m)` and gap `g(m)` (seconds) at the `n` message sizes
/// `sizes` (bytes, increasing), interpolated between them as `commcost::table::Table1D` does;
/// `processors` as measured. Validated as `commcost::PLogP::new` validates it.
///
/// Returns `CC_OK`, `CC_ERR_NULL_POINTER` or `CC_ERR_INVALID_ARGUMENT` naming the parameter.
///
/// # Safety
///
/// `sizes`, `send_overhead`, `recv_overhead` and `gap` are NULL or point to `n` readable
/// values each; `out` as in [`cc_loggp_new`].
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cc_plogp_new(
    latency: f64,
    sizes: *const u64,
    n: usize,
    send_overhead: *const f64,
    recv_overhead: *const f64,
    gap: *const f64,
    processors: u64,
    out: *mut *mut CcModel,
) -> i32 {
    guard(|| {
        in_range(&[("processors", processors)])?;
        let sizes = slice(sizes, n, "sizes")?;
        if let Some(i) = sizes.iter().position(|&s| s > MAX_ARG) {
            in_range(&[(&format!("sizes[{i}]"), sizes[i])])?;
        }
        let grid: Vec<f64> = sizes.iter().map(|&s| s as f64).collect();
        let table = |values: *const f64, what: &str| -> Result<Table1D, Failure> {
            let values = slice(values, n, what)?;
            Table1D::new(grid.clone(), values.to_vec())
                .map_err(|e| Failure(CC_ERR_INVALID_ARGUMENT, format!("{what}: {e}")))
        };
        let m = commcost::PLogP::new(
            latency,
            table(send_overhead, "send_overhead")?,
            table(recv_overhead, "recv_overhead")?,
            table(gap, "gap")?,
            processors,
        )
        .map_err(invalid)?;
        new_model(m.into(), out)
    })
}

/// LogGP with protocol ranges (Hoefler, Lichei, Rehm, "Low-overhead LogGP parameter assessment
/// for modern interconnection networks", IPDPS 2007) into `*out`: range `i` starts at
/// `starts[i]` bytes (`starts[0]` at most 1, increasing) and ends where the next starts, the
/// last one open; in it LogGP with `latency[i]`, `overhead[i]`, `gap[i]` (seconds) and
/// `gap_per_byte[i]` (seconds per byte). Messages larger than `rendezvous_above` bytes use the
/// rendezvous protocol in the simulator; 0: no switch. Validated as `commcost::Protocols::new`
/// validates it.
///
/// Returns `CC_OK`, `CC_ERR_NULL_POINTER` or `CC_ERR_INVALID_ARGUMENT` naming the parameter.
///
/// # Safety
///
/// `starts`, `latency`, `overhead`, `gap` and `gap_per_byte` are NULL or point to `n` readable
/// values each; `out` as in [`cc_loggp_new`].
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cc_loggp_ranges_new(
    n: usize,
    starts: *const u64,
    latency: *const f64,
    overhead: *const f64,
    gap: *const f64,
    gap_per_byte: *const f64,
    rendezvous_above: u64,
    out: *mut *mut CcModel,
) -> i32 {
    guard(|| {
        in_range(&[("rendezvous_above", rendezvous_above)])?;
        let starts = slice(starts, n, "starts")?;
        if let Some(i) = starts.iter().position(|&s| s > MAX_ARG) {
            in_range(&[(&format!("starts[{i}]"), starts[i])])?;
        }
        let (l, o) = (
            slice(latency, n, "latency")?,
            slice(overhead, n, "overhead")?,
        );
        let (g, gb) = (
            slice(gap, n, "gap")?,
            slice(gap_per_byte, n, "gap_per_byte")?,
        );
        let mut ranges = Vec::new();
        for i in 0..n {
            let model = commcost::LogGP::new(l[i], o[i], g[i], gb[i])
                .map_err(|e| Failure(CC_ERR_INVALID_ARGUMENT, format!("range {i}: {e}")))?;
            let end = starts.get(i + 1).copied();
            ranges.push(commcost::models::protocol::ProtocolRange::new(
                starts[i], end, model,
            ));
        }
        let mut m = commcost::Protocols::new(ranges).map_err(invalid)?;
        if rendezvous_above > 0 {
            m = m.with_rendezvous_above(rendezvous_above);
        }
        new_model(ModelSpec::LogGPProtocols(m), out)
    })
}

/// A parameter error as `CC_ERR_INVALID_ARGUMENT`, naming the parameter.
fn invalid(e: commcost::ParameterError) -> Failure {
    Failure(CC_ERR_INVALID_ARGUMENT, e.to_string())
}

/// Loads a model from JSON text (as [`cc_model_load`] reads a file) into `*out`.
///
/// # Safety
///
/// As [`cc_model_preset`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_model_from_json(json: *const c_char, out: *mut *mut CcModel) -> i32 {
    guard(|| {
        let json = text(json, "json")?;
        new_model(core::model_from_json(json, "json")?, out)
    })
}

/// Frees a model. NULL is ignored.
///
/// # Safety
///
/// `model` is NULL or a handle from a `cc_model_*` constructor not freed before, and no other
/// thread uses it during or after the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_model_free(model: *mut CcModel) {
    if model.is_null() {
        return;
    }
    // SAFETY: `model` came from `Box::into_raw` in `new_model` and is freed once (contract).
    let boxed = unsafe { Box::from_raw(model) };
    let _ = catch_unwind(AssertUnwindSafe(move || drop(boxed)));
}

/// End-to-end time (seconds) of one contiguous message of `bytes` bytes: `*out = p2p(bytes)`.
///
/// # Safety
///
/// `model` is NULL or a live handle; `out` is NULL or points to a writable `double`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_p2p(model: *const CcModel, bytes: u64, out: *mut f64) -> i32 {
    guard(|| {
        let m = model_ref(model)?;
        in_range(&[("bytes", bytes)])?;
        write_out(out, m.p2p(&commcost::Message::contiguous(bytes)), "out")
    })
}

/// End-to-end time (seconds) of a vector message: `count` blocks of `block_len` bytes whose
/// starts are `stride` bytes apart (`MPI_Type_vector` in bytes; `count <= 1` is contiguous).
///
/// Returns `CC_ERR_INVALID_ARGUMENT` for a zero stride, a block longer than its stride or an
/// extent beyond 2^64 bytes.
///
/// # Safety
///
/// As [`cc_p2p`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_p2p_vector(
    model: *const CcModel,
    count: u64,
    block_len: u64,
    stride: u64,
    out: *mut f64,
) -> i32 {
    guard(|| {
        let m = model_ref(model)?;
        in_range(&[
            ("count", count),
            ("block_len", block_len),
            ("stride", stride),
        ])?;
        let msg = core::message(count, block_len, stride)?;
        write_out(out, m.p2p(&msg), "out")
    })
}

/// `out[i] = p2p(sizes[i])` for contiguous messages, `i < n`.
///
/// # Safety
///
/// `sizes` and `out` point to `n` readable `uint64_t` and `n` writable `double` that do not
/// overlap (either may be NULL when `n = 0`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_p2p_many(
    model: *const CcModel,
    sizes: *const u64,
    n: usize,
    out: *mut f64,
) -> i32 {
    guard(|| {
        let m = model_ref(model)?;
        let sizes = slice(sizes, n, "sizes")?;
        if let Some(i) = sizes.iter().position(|&s| s > MAX_ARG) {
            in_range(&[(&format!("sizes[{i}]"), sizes[i])])?;
        }
        if n == 0 {
            return Ok(());
        }
        if out.is_null() {
            return Err(null("out"));
        }
        // SAFETY: `out` is non-NULL and points to `n` writable doubles not overlapping `sizes`
        // (contract); the length fits an isize because `sizes` of the same length did.
        let out = unsafe { std::slice::from_raw_parts_mut(out, n) };
        for (o, &s) in out.iter_mut().zip(sizes) {
            *o = m.p2p(&commcost::Message::contiguous(s));
        }
        Ok(())
    })
}

/// The five quantities — end-to-end time, send and receive overheads, send interval, gap — of a
/// message of `count` blocks of `block_len` bytes `stride` apart (`count = 1`: contiguous
/// `block_len` bytes).
///
/// # Safety
///
/// `model` is NULL or a live handle; `out` is NULL or points to a writable `CcQuantities`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_quantities(
    model: *const CcModel,
    count: u64,
    block_len: u64,
    stride: u64,
    out: *mut CcQuantities,
) -> i32 {
    guard(|| {
        let m = model_ref(model)?;
        in_range(&[
            ("count", count),
            ("block_len", block_len),
            ("stride", stride),
        ])?;
        let msg = core::message(count, block_len, stride)?;
        let [p2p, send_overhead, recv_overhead, send_interval, gap] = core::quantities(m, &msg);
        let q = CcQuantities {
            p2p,
            send_overhead,
            recv_overhead,
            send_interval,
            gap,
        };
        write_out(out, q, "out")
    })
}

/// Every candidate algorithm of `collective` (a `CC_*` collective code) in `family`
/// (`CC_FAMILY_OMPI`, `CC_FAMILY_TEXTBOOK`) with its cost for a contiguous message of `bytes`
/// on `processes` processes, cheapest first. The operator of reductions is free.
///
/// `*count` receives the number of candidates; when it exceeds `capacity` nothing is written to
/// `out` and the call returns `CC_ERR_BUFFER_TOO_SMALL` (call with `capacity = 0` to ask).
///
/// # Safety
///
/// `out` points to `capacity` writable `CcAlgorithm` (may be NULL when `capacity = 0`);
/// `count` is NULL or points to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_collective_rank(
    model: *const CcModel,
    family: i32,
    collective: i32,
    processes: u64,
    bytes: u64,
    out: *mut CcAlgorithm,
    capacity: usize,
    count: *mut usize,
) -> i32 {
    guard(|| {
        let m = model_ref(model)?;
        if count.is_null() {
            return Err(null("count"));
        }
        let (f, c) = family_and_collective(family, collective)?;
        in_range(&[("processes", processes), ("bytes", bytes)])?;
        let ranked = core::rank(m, f, c, processes, bytes)?;
        write_out(count, ranked.len(), "count")?;
        if ranked.len() > capacity {
            return Err(Failure(
                CC_ERR_BUFFER_TOO_SMALL,
                format!("out: {} candidates, capacity {capacity}", ranked.len()),
            ));
        }
        let records = ranked.iter().map(record).collect::<Result<Vec<_>, _>>()?;
        if out.is_null() {
            return if records.is_empty() {
                Ok(())
            } else {
                Err(null("out"))
            };
        }
        for (i, r) in records.into_iter().enumerate() {
            // SAFETY: `out` is non-NULL and points to `capacity >= records.len() > i` writable
            // records (contract).
            unsafe { out.add(i).write(r) };
        }
        Ok(())
    })
}

/// The cheapest algorithm of `collective` in `family` for `bytes` on `processes` processes.
///
/// # Safety
///
/// `model` is NULL or a live handle; `out` is NULL or points to a writable `CcAlgorithm`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_collective_best(
    model: *const CcModel,
    family: i32,
    collective: i32,
    processes: u64,
    bytes: u64,
    out: *mut CcAlgorithm,
) -> i32 {
    guard(|| {
        let m = model_ref(model)?;
        let (f, c) = family_and_collective(family, collective)?;
        in_range(&[("processes", processes), ("bytes", bytes)])?;
        let best = core::best(m, f, c, processes, bytes)?;
        write_out(out, record(&best)?, "out")
    })
}

/// The cost of the algorithm `name` of `collective` in `family`: commcost's name
/// (`binomial`, `chain:segment=8192,fanout=4`, as `CcAlgorithm.name` prints it), or in the Open
/// MPI family also Open MPI's name or ID (`split_binary_tree`, `4`).
///
/// # Safety
///
/// `name` is NULL or a NUL-terminated string; otherwise as [`cc_collective_best`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_collective_cost(
    model: *const CcModel,
    family: i32,
    collective: i32,
    name: *const c_char,
    processes: u64,
    bytes: u64,
    out: *mut CcAlgorithm,
) -> i32 {
    guard(|| {
        let m = model_ref(model)?;
        let (f, c) = family_and_collective(family, collective)?;
        in_range(&[("processes", processes), ("bytes", bytes)])?;
        let name = text(name, "name")?;
        let choice = core::algorithm(m, f, c, name, processes, bytes)?;
        write_out(out, record(&choice)?, "out")
    })
}

/// Computes a decision table once: the best algorithm of `collective` in `family` at every
/// process count of `processes[0..n_processes]` and message size of `sizes[0..n_sizes]` (both
/// strictly increasing, process counts >= 1, at most 2^20 cells). Look it up with
/// [`cc_table_lookup`] in the hot path; free it with [`cc_table_free`].
///
/// # Safety
///
/// `processes` and `sizes` point to that many readable `uint64_t`; `out` is NULL or points to
/// writable storage for a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_table_build(
    model: *const CcModel,
    family: i32,
    collective: i32,
    processes: *const u64,
    n_processes: usize,
    sizes: *const u64,
    n_sizes: usize,
    out: *mut *mut CcTable,
) -> i32 {
    guard(|| {
        let m = model_ref(model)?;
        if out.is_null() {
            return Err(null("out"));
        }
        let (f, c) = family_and_collective(family, collective)?;
        // the grid's size is checked before any pointer is read
        if n_processes
            .checked_mul(n_sizes)
            .is_none_or(|cells| cells > core::MAX_TABLE_CELLS)
        {
            return Err(Failure(
                CC_ERR_INVALID_ARGUMENT,
                format!(
                    "table: {n_processes} process counts x {n_sizes} sizes exceed {} cells",
                    core::MAX_TABLE_CELLS
                ),
            ));
        }
        let processes = slice(processes, n_processes, "processes")?;
        let sizes = slice(sizes, n_sizes, "sizes")?;
        for (name, axis) in [("processes", processes), ("sizes", sizes)] {
            if let Some(i) = axis.iter().position(|&v| v > MAX_ARG) {
                in_range(&[(&format!("{name}[{i}]"), axis[i])])?;
            }
        }
        let table = Table::build(m, f, c, processes, sizes)?;
        let cells = table.cells().iter().map(record).collect::<Result<_, _>>()?;
        let handle = Box::into_raw(Box::new(CcTable { table, cells }));
        write_out(out, handle, "out")
    })
}

/// The table's choice at the grid point at or below `(processes, bytes)` (the first grid point
/// when below the grid): two binary searches, no allocation. `*out` points into the table
/// (valid until [`cc_table_free`]); its `cost` is the cost at the grid point.
///
/// # Safety
///
/// `table` is NULL or a live table; `out` is NULL or points to writable storage for a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_table_lookup(
    table: *const CcTable,
    processes: u64,
    bytes: u64,
    out: *mut *const CcAlgorithm,
) -> i32 {
    guard(|| {
        // SAFETY: a non-NULL `table` is a live handle from `cc_table_build` (contract), only
        // read here.
        let t = unsafe { table.as_ref() }.ok_or_else(|| null("table"))?;
        in_range(&[("processes", processes), ("bytes", bytes)])?;
        let i = t.table.lookup_index(processes, bytes);
        let cell = t.cells.get(i).ok_or_else(|| null("table cell"))?;
        write_out(out, std::ptr::from_ref(cell), "out")
    })
}

/// Frees a table. NULL is ignored.
///
/// # Safety
///
/// `table` is NULL or a table from [`cc_table_build`] not freed before, and no pointer from
/// [`cc_table_lookup`] into it is used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_table_free(table: *mut CcTable) {
    if table.is_null() {
        return;
    }
    // SAFETY: `table` came from `Box::into_raw` in `cc_table_build` and is freed once.
    let boxed = unsafe { Box::from_raw(table) };
    let _ = catch_unwind(AssertUnwindSafe(move || drop(boxed)));
}
