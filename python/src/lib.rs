//! `commcost._commcost`: the compiled part of the `commcost` Python package (pyo3, abi3).
//! `commcost/__init__.py` wraps it (pandas DataFrames when pandas is installed); the type
//! stubs are `commcost/_commcost.pyi`.

use std::path::PathBuf;

use commcost::calibrate::{
    BenchmarkFitConfig, BenchmarkFormat, CalibrationError, SeriesKind, fit_loggp_from_benchmarks,
    read_benchmark_file,
};
use commcost::sim::{OpId, OpKind, SimOptions, simulate as run_simulation};
use commcost::{Message, ModelSpec};
use commcost_capi::core::{self, Choice, Collective, CoreError, Family};
use numpy::ndarray::ArrayD;
use numpy::{IntoPyArray, PyArray1, PyArrayDyn, PyArrayMethods};
use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList};

/// Most values of a grid axis (`table`'s `procs`, `sizes`): the C ABI's table cell limit.
const MAX_AXIS: usize = core::MAX_TABLE_CELLS;

/// Most files `calibrate_osu` reads.
const MAX_BENCHMARK_FILES: usize = 64;

fn err(e: CoreError) -> PyErr {
    match e {
        CoreError::Io(m) => PyOSError::new_err(m),
        other => PyValueError::new_err(other.to_string()),
    }
}

/// A non-negative integer argument named `field`: Python `int` (not `bool`) or numpy integer.
fn uint(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<u64> {
    if obj.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(format!(
            "{field}: expected a non-negative integer, got bool"
        )));
    }
    if obj.is_instance_of::<PyFloat>() {
        return Err(PyTypeError::new_err(format!(
            "{field}: expected a non-negative integer, got float {}",
            obj.repr()?
        )));
    }
    if let Ok(v) = obj.extract::<u64>() {
        return Ok(v);
    }
    match obj.extract::<i64>() {
        Ok(v) => Err(PyValueError::new_err(format!(
            "{field}: {v} is negative; sizes and counts are >= 0"
        ))),
        Err(_) if obj.is_instance_of::<PyInt>() => Err(PyValueError::new_err(format!(
            "{field}: {} does not fit in 64 bits",
            obj.repr()?
        ))),
        Err(_) => Err(PyTypeError::new_err(format!(
            "{field}: expected a non-negative integer, got {}",
            obj.get_type().name()?
        ))),
    }
}

/// A list of non-negative integers named `field`.
fn uints(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<Vec<u64>> {
    if obj.is_instance_of::<pyo3::types::PyString>() {
        return Err(PyTypeError::new_err(format!(
            "{field}: expected a sequence of integers, got str"
        )));
    }
    let mut out = Vec::new();
    for (i, item) in obj.try_iter()?.enumerate() {
        if i >= MAX_AXIS {
            return Err(PyValueError::new_err(format!(
                "{field}: more than {MAX_AXIS} values"
            )));
        }
        out.push(uint(&item?, &format!("{field}[{i}]"))?);
    }
    Ok(out)
}

/// Message sizes as an n-dimensional `u64` array: numpy arrays of any integer dtype or of
/// integral floats, lists, scalars. Negative, NaN, infinite, fractional sizes and other types
/// raise, naming `sizes[i]` (flat index).
fn sizes_array(py: Python<'_>, sizes: &Bound<'_, PyAny>) -> PyResult<ArrayD<u64>> {
    if let Ok(a) = sizes.cast::<PyArrayDyn<u64>>() {
        return Ok(a.readonly().as_array().to_owned());
    }
    let np = py.import("numpy")?;
    let arr = np
        .call_method1("asarray", (sizes,))
        .map_err(|e| PyTypeError::new_err(format!("sizes: not convertible to an array: {e}")))?;
    let kind: String = arr.getattr("dtype")?.getattr("kind")?.extract()?;
    match kind.as_str() {
        "u" => {
            let a = arr.call_method1("astype", ("uint64",))?;
            Ok(a.cast::<PyArrayDyn<u64>>()?
                .readonly()
                .as_array()
                .to_owned())
        }
        "i" => {
            let a = arr.call_method1("astype", ("int64",))?;
            let a = a.cast::<PyArrayDyn<i64>>()?.readonly();
            let view = a.as_array();
            if let Some((i, v)) = view.iter().enumerate().find(|(_, v)| **v < 0) {
                return Err(PyValueError::new_err(format!(
                    "sizes[{i}]: {v} is negative; message sizes are >= 0 bytes"
                )));
            }
            Ok(view.mapv(|v| v as u64))
        }
        "f" => {
            let a = arr.call_method1("astype", ("float64",))?;
            let a = a.cast::<PyArrayDyn<f64>>()?.readonly();
            let view = a.as_array();
            for (i, &v) in view.iter().enumerate() {
                let problem = if v.is_nan() {
                    Some("is NaN")
                } else if !v.is_finite() {
                    Some("is infinite")
                } else if v < 0.0 {
                    Some("is negative")
                } else if v.fract() != 0.0 {
                    Some("is not a whole number of bytes")
                } else if v >= 18446744073709551616.0 {
                    Some("does not fit in 64 bits")
                } else {
                    None
                };
                if let Some(p) = problem {
                    return Err(PyValueError::new_err(format!("sizes[{i}]: {v} {p}")));
                }
            }
            Ok(view.mapv(|v| v as u64))
        }
        // Python ints beyond 64 bits, or mixed objects: each element checked, naming the first
        // that is not a size
        "O" => {
            let shape: Vec<usize> = arr.getattr("shape")?.extract()?;
            let flat = arr.call_method0("ravel")?;
            let mut out = Vec::new();
            for (i, item) in flat.try_iter()?.enumerate() {
                out.push(uint(&item?, &format!("sizes[{i}]"))?);
            }
            ArrayD::from_shape_vec(shape, out)
                .map_err(|e| PyValueError::new_err(format!("sizes: {e}")))
        }
        other => Err(PyTypeError::new_err(format!(
            "sizes: expected integer message sizes (bytes), got an array of dtype kind `{other}`"
        ))),
    }
}

/// The path (`ranges[1].model.latency`) of the first NaN or infinite float inside nested
/// dicts and lists, at most 64 levels deep.
fn non_finite(obj: &Bound<'_, PyAny>, path: String, depth: u32) -> PyResult<Option<String>> {
    if depth > 64 {
        return Err(PyValueError::new_err(format!(
            "spec: `{path}` nests too deeply"
        )));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        for (k, v) in d.iter() {
            let key = k.str()?.to_string();
            let sub = if path.is_empty() {
                key
            } else {
                format!("{path}.{key}")
            };
            if let Some(p) = non_finite(&v, sub, depth + 1)? {
                return Ok(Some(p));
            }
        }
    } else if let Ok(l) = obj.cast::<PyList>() {
        for (i, v) in l.iter().enumerate() {
            if let Some(p) = non_finite(&v, format!("{path}[{i}]"), depth + 1)? {
                return Ok(Some(p));
            }
        }
    } else if obj.is_instance_of::<PyFloat>() {
        let v: f64 = obj.extract()?;
        if !v.is_finite() {
            return Ok(Some(path));
        }
    }
    Ok(None)
}

/// Which per-message quantity to evaluate.
#[derive(Debug, Clone, Copy)]
enum Which {
    P2p,
    SendOverhead,
    RecvOverhead,
    SendInterval,
    Gap,
}

/// A communication model (any model of commcost), immutable.
#[pyclass(frozen, module = "commcost")]
#[derive(Debug)]
struct Model {
    spec: ModelSpec,
    name: String,
}

impl Model {
    fn eval<'py>(
        &self,
        py: Python<'py>,
        sizes: &Bound<'py, PyAny>,
        which: Which,
    ) -> PyResult<Bound<'py, PyAny>> {
        let m = self.spec.as_model();
        let f = move |s: u64| {
            let msg = Message::contiguous(s);
            match which {
                Which::P2p => m.p2p(&msg),
                Which::SendOverhead => m.send_overhead(&msg),
                Which::RecvOverhead => m.recv_overhead(&msg),
                Which::SendInterval => m.send_interval(&msg),
                Which::Gap => m.gap(&msg),
            }
        };
        let scalar = sizes.is_instance_of::<PyInt>()
            || sizes.is_instance_of::<PyFloat>()
            || sizes.is_instance_of::<PyBool>();
        if scalar {
            if sizes.is_instance_of::<PyFloat>() {
                let v: f64 = sizes.extract()?;
                let a = sizes_array(py, &PyFloat::new(py, v).into_any())?;
                return Ok(PyFloat::new(py, f(a.iter().next().copied().unwrap_or(0))).into_any());
            }
            let s = uint(sizes, "sizes")?;
            return Ok(PyFloat::new(py, f(s)).into_any());
        }
        let a = sizes_array(py, sizes)?;
        // a numpy scalar (`np.int64(8)`) is a scalar too: a float out
        if a.ndim() == 0 {
            return Ok(PyFloat::new(py, f(a.iter().next().copied().unwrap_or(0))).into_any());
        }
        let out = py.detach(move || a.mapv(f));
        Ok(out.into_pyarray(py).into_any())
    }
}

#[pymethods]
impl Model {
    /// An embedded parameter set: `open-mpi-openib`, `open-mpi-gm`, `mpich2-tcp`, `nmpi-sci`,
    /// `titan-log3p`.
    #[staticmethod]
    fn preset(name: &str) -> PyResult<Self> {
        Ok(Self {
            spec: core::preset(name).map_err(err)?,
            name: name.to_string(),
        })
    }

    /// A model file, read as the `commcost` command reads `--model`: a ModelSpec JSON document,
    /// a file written by `commcost calibrate`, or several named models (`FILE#NAME`).
    #[staticmethod]
    fn from_file(path: PathBuf) -> PyResult<Self> {
        Ok(Self {
            spec: core::model_from_file(&path).map_err(err)?,
            name: path.display().to_string(),
        })
    }

    /// A model from JSON text.
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<Self> {
        Ok(Self {
            spec: core::model_from_json(text, "json").map_err(err)?,
            name: "json".into(),
        })
    }

    /// A model from a dict, `{"model": "loggp", "latency": 5e-6, ...}`.
    #[staticmethod]
    fn from_dict(py: Python<'_>, spec: &Bound<'_, PyAny>) -> PyResult<Self> {
        if !spec.is_instance_of::<PyDict>() {
            return Err(PyTypeError::new_err(format!(
                "spec: expected a dict, got {}",
                spec.get_type().name()?
            )));
        }
        if let Some(path) = non_finite(spec, String::new(), 0)? {
            return Err(PyValueError::new_err(format!(
                "spec: `{path}` is NaN or infinite; parameters must be finite"
            )));
        }
        let json = py.import("json")?;
        let text: String = json
            .call_method1("dumps", (spec,))
            .map_err(|e| PyValueError::new_err(format!("spec: not JSON-serialisable: {e}")))?
            .extract()?;
        Ok(Self {
            spec: core::model_from_json(&text, "spec").map_err(err)?,
            name: "dict".into(),
        })
    }

    /// The model as ModelSpec JSON (what `from_json` and `from_file` read).
    fn to_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.spec).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// End-to-end time (seconds) of contiguous messages: a float for an int, an array of the
    /// same shape for an array. LogGP: `T(s) = 2o + L + (s - 1) G` (Alexandrov, Ionescu,
    /// Schauser, Scheiman, "LogGP: Incorporating Long Messages into the LogP Model", SPAA 1995);
    /// a protocol-range model uses the range of each size.
    fn p2p<'py>(&self, py: Python<'py>, sizes: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        self.eval(py, sizes, Which::P2p)
    }

    /// The sender's CPU overhead (seconds), vectorised as `p2p`: LogP's `o` at the sender.
    fn send_overhead<'py>(
        &self,
        py: Python<'py>,
        sizes: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.eval(py, sizes, Which::SendOverhead)
    }

    /// The receiver's CPU overhead (seconds), vectorised as `p2p`: LogP's `o` at the receiver.
    fn recv_overhead<'py>(
        &self,
        py: Python<'py>,
        sizes: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.eval(py, sizes, Which::RecvOverhead)
    }

    /// Minimum time between the starts of consecutive sends (seconds), vectorised as `p2p`.
    /// LogP `max(g, o)`, LogGP `max(o, g + (s - 1) G)`.
    fn send_interval<'py>(
        &self,
        py: Python<'py>,
        sizes: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.eval(py, sizes, Which::SendInterval)
    }

    /// The gap between successive messages (seconds), vectorised as `p2p`: LogP's and LogGP's
    /// `g`.
    fn gap<'py>(&self, py: Python<'py>, sizes: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        self.eval(py, sizes, Which::Gap)
    }

    /// The five quantities of a vector message of `count` blocks of `block_len` bytes `stride`
    /// bytes apart (`stride` defaults to `block_len`: contiguous).
    #[pyo3(signature = (block_len, count = None, stride = None))]
    fn quantities<'py>(
        &self,
        py: Python<'py>,
        block_len: &Bound<'py, PyAny>,
        count: Option<&Bound<'py, PyAny>>,
        stride: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let block_len = uint(block_len, "block_len")?;
        let count = count.map(|c| uint(c, "count")).transpose()?.unwrap_or(1);
        let stride = stride
            .map(|s| uint(s, "stride"))
            .transpose()?
            .unwrap_or(block_len);
        let msg = core::message(count, block_len, stride).map_err(err)?;
        let q = core::quantities(self.spec.as_model(), &msg);
        let d = PyDict::new(py);
        for (k, v) in [
            "p2p",
            "send_overhead",
            "recv_overhead",
            "send_interval",
            "gap",
        ]
        .iter()
        .zip(q)
        {
            d.set_item(k, v)?;
        }
        Ok(d)
    }

    /// Sizes at which the model's costs may jump (protocol switches).
    fn size_breakpoints(&self) -> Vec<u64> {
        self.spec.as_model().size_breakpoints()
    }

    /// The model's name: the preset, the file, `json` or `dict`.
    #[getter]
    fn name(&self) -> String {
        self.name.clone()
    }

    /// Models are equal when their parameters are (the name is not compared): they predict
    /// the same times.
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Model>()
            .is_ok_and(|o| o.get().spec == self.spec)
    }

    /// Pickling (multiprocessing, joblib): the model's JSON and its name, read back exactly.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (String, String))> {
        let restore = py.get_type::<Model>().getattr("_restore")?;
        Ok((restore, (self.to_json()?, self.name.clone())))
    }

    /// The model of a pickle ([`__reduce__`]).
    #[staticmethod]
    fn _restore(text: &str, name: String) -> PyResult<Self> {
        Ok(Self {
            spec: core::model_from_json(text, "pickle").map_err(err)?,
            name,
        })
    }

    fn __repr__(&self) -> String {
        format!("commcost.Model({:?})", self.name)
    }
}

fn record<'py>(py: Python<'py>, c: &Choice, extra: &[(&str, u64)]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in extra {
        d.set_item(*k, *v)?;
    }
    d.set_item("algorithm", &c.name)?;
    d.set_item("cost", c.cost)?;
    let ompi = c.ompi;
    d.set_item("ompi_id", ompi.map_or(0, |o| o.id))?;
    d.set_item("ompi_name", ompi.map_or("", |o| o.name))?;
    d.set_item("segment", ompi.map_or(0, |o| o.segment))?;
    d.set_item("fanout", ompi.map_or(0, |o| o.fanout))?;
    d.set_item("mpich_name", c.mpich_name)?;
    Ok(d)
}

/// A text argument: a `str` of valid UTF-8, else an error naming the argument.
fn text_arg(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<String> {
    let s = obj.cast::<pyo3::types::PyString>().map_err(|_| {
        let got = obj
            .get_type()
            .name()
            .map_or_else(|_| "?".to_string(), |n| n.to_string());
        PyTypeError::new_err(format!("{name}: expected a str, got {got}"))
    })?;
    s.to_cow().map(std::borrow::Cow::into_owned).map_err(|_| {
        PyValueError::new_err(format!(
            "{name}: not valid text (a lone surrogate cannot be encoded)"
        ))
    })
}

fn collective_arg(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    text_arg(obj, "collective")
}

fn family_arg(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    text_arg(obj, "family")
}

fn algorithm_arg(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    text_arg(obj, "algorithm")
}

fn coll_and_family(collective: &str, family: &str) -> PyResult<(Collective, Family)> {
    Ok((
        core::collective_from_name(collective).map_err(err)?,
        core::family_from_name(family).map_err(err)?,
    ))
}

/// Every candidate algorithm of `collective` with its cost on `procs` processes for
/// `nbytes`-byte messages, cheapest first: a list of dicts.
#[pyfunction]
#[pyo3(
    signature = (model, collective, procs, nbytes, family = String::from("ompi")),
    text_signature = "(model, collective, procs, nbytes, family='ompi')"
)]
fn select<'py>(
    py: Python<'py>,
    model: &Model,
    #[pyo3(from_py_with = collective_arg)] collective: String,
    procs: &Bound<'py, PyAny>,
    nbytes: &Bound<'py, PyAny>,
    #[pyo3(from_py_with = family_arg)] family: String,
) -> PyResult<Bound<'py, PyList>> {
    let (c, f) = coll_and_family(&collective, &family)?;
    let (p, s) = (uint(procs, "procs")?, uint(nbytes, "nbytes")?);
    let ranked = core::rank(model.spec.as_model(), f, c, p, s).map_err(err)?;
    let rows = ranked
        .iter()
        .map(|r| record(py, r, &[]))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, rows)
}

/// The best algorithm of `collective` at every `(procs, size)` of the grid: a list of dicts
/// with `processes` and `bytes`.
#[pyfunction]
#[pyo3(
    signature = (model, collective, procs, sizes, family = String::from("ompi")),
    text_signature = "(model, collective, procs, sizes, family='ompi')"
)]
fn table<'py>(
    py: Python<'py>,
    model: &Model,
    #[pyo3(from_py_with = collective_arg)] collective: String,
    procs: &Bound<'py, PyAny>,
    sizes: &Bound<'py, PyAny>,
    #[pyo3(from_py_with = family_arg)] family: String,
) -> PyResult<Bound<'py, PyList>> {
    let (c, f) = coll_and_family(&collective, &family)?;
    let (procs, sizes) = (uints(procs, "procs")?, uints(sizes, "sizes")?);
    let t = core::Table::build(model.spec.as_model(), f, c, &procs, &sizes).map_err(err)?;
    let mut rows = Vec::with_capacity(t.cells().len());
    let n = sizes.len();
    for (i, cell) in t.cells().iter().enumerate() {
        rows.push(record(
            py,
            cell,
            &[("processes", procs[i / n]), ("bytes", sizes[i % n])],
        )?);
    }
    PyList::new(py, rows)
}

/// A LogGP model with one range per detected protocol, fitted to OSU Micro-Benchmarks output
/// files: `osu_latency` (required) and `osu_bw` (optional).
#[pyfunction]
#[pyo3(signature = (paths, overhead_share = 0.0))]
fn calibrate_osu(paths: &Bound<'_, PyAny>, overhead_share: f64) -> PyResult<Model> {
    if paths.is_instance_of::<pyo3::types::PyString>() {
        return Err(PyTypeError::new_err(
            "paths: expected a list of file paths, got one str",
        ));
    }
    if !(0.0..=1.0).contains(&overhead_share) {
        return Err(PyValueError::new_err(format!(
            "overhead_share: {overhead_share} is not in [0, 1]"
        )));
    }
    let mut latency = None;
    let mut bandwidth = None;
    let mut names = Vec::new();
    for (i, p) in paths.try_iter()?.enumerate() {
        if i >= MAX_BENCHMARK_FILES {
            return Err(PyValueError::new_err(format!(
                "paths: more than {MAX_BENCHMARK_FILES} files"
            )));
        }
        let path: PathBuf = p?
            .extract()
            .map_err(|_| PyTypeError::new_err(format!("paths[{i}]: expected a path")))?;
        let shown = path.display().to_string();
        let series = match read_benchmark_file(&path, BenchmarkFormat::Osu) {
            Ok(mut all) if all.len() == 1 => all.remove(0),
            Ok(_) => {
                return Err(PyValueError::new_err(format!(
                    "paths[{i}]: {shown}: not one OSU series"
                )));
            }
            Err(e @ CalibrationError::File(_)) => {
                return Err(PyOSError::new_err(format!("paths[{i}]: {e}")));
            }
            Err(e) => return Err(PyValueError::new_err(format!("paths[{i}]: {e}"))),
        };
        match series.kind {
            SeriesKind::Latency if latency.is_none() => latency = Some(series),
            SeriesKind::Bandwidth if bandwidth.is_none() => bandwidth = Some(series),
            _ => {}
        }
        names.push(shown);
    }
    let latency = latency
        .ok_or_else(|| PyValueError::new_err("paths: none of the files is osu_latency output"))?;
    let config = BenchmarkFitConfig {
        overhead_share,
        ..BenchmarkFitConfig::default()
    };
    let fit = fit_loggp_from_benchmarks(&latency, bandwidth.as_ref(), &config)
        .map_err(|e| PyValueError::new_err(format!("paths: {e}")))?;
    Ok(Model {
        spec: fit.model.into(),
        name: names.join(","),
    })
}

/// Simulates the message schedule of one algorithm (LogGOPS, `commcost::sim`): a dict with
/// `makespan` (seconds), `rank_finish` (array) and the timeline as arrays over operations
/// (`rank`, `kind` 0 send / 1 receive / 2 calc, `peer` or -1, `bytes`, `start`, `end`).
#[pyfunction]
#[pyo3(
    signature = (model, collective, algorithm, procs, nbytes, family = String::from("ompi"), rendezvous = false),
    text_signature = "(model, collective, algorithm, procs, nbytes, family='ompi', rendezvous=False)"
)]
#[allow(clippy::too_many_arguments)]
fn simulate<'py>(
    py: Python<'py>,
    model: &Model,
    #[pyo3(from_py_with = collective_arg)] collective: String,
    #[pyo3(from_py_with = algorithm_arg)] algorithm: String,
    procs: &Bound<'py, PyAny>,
    nbytes: &Bound<'py, PyAny>,
    #[pyo3(from_py_with = family_arg)] family: String,
    rendezvous: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let (c, f) = coll_and_family(&collective, &family)?;
    let (p, s) = (uint(procs, "procs")?, uint(nbytes, "nbytes")?);
    let schedule = core::schedule(f, c, &algorithm, p, s).map_err(err)?;
    let m = model.spec.as_model();
    let mut options = SimOptions {
        timeline: true,
        ..SimOptions::default()
    };
    if rendezvous {
        options = options.with_protocols_of(m);
    }
    let run = py
        .detach(|| run_simulation(&schedule, m, &options))
        .map_err(|e| PyValueError::new_err(format!("simulate: {e}")))?;
    let n = schedule.len();
    let (mut rank, mut kind, mut peer, mut bytes) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for i in 0..n {
        let op = OpId(u32::try_from(i).unwrap_or(u32::MAX));
        rank.push(schedule.rank(op).map_or(-1, |r| r as i64));
        kind.push(match schedule.kind(op) {
            Some(OpKind::Send) => 0u8,
            Some(OpKind::Recv) => 1,
            _ => 2,
        });
        peer.push(schedule.peer(op).map_or(-1, |r| r as i64));
        bytes.push(schedule.message(op).map_or(0, |m| m.bytes()));
    }
    let d = PyDict::new(py);
    d.set_item("makespan", run.makespan)?;
    d.set_item("rank_finish", PyArray1::from_vec(py, run.rank_finish))?;
    d.set_item("rank", PyArray1::from_vec(py, rank))?;
    d.set_item("kind", PyArray1::from_vec(py, kind))?;
    d.set_item("peer", PyArray1::from_vec(py, peer))?;
    d.set_item("bytes", PyArray1::from_vec(py, bytes))?;
    d.set_item(
        "start",
        PyArray1::from_vec(py, run.starts.unwrap_or_default()),
    )?;
    d.set_item("end", PyArray1::from_vec(py, run.ends.unwrap_or_default()))?;
    Ok(d)
}

/// The preset names.
#[pyfunction]
fn presets() -> Vec<&'static str> {
    core::PRESETS.iter().map(|(n, _)| *n).collect()
}

/// The names of the collectives some algorithm family prices (MPI's lower-case names).
#[pyfunction]
fn collectives() -> Vec<&'static str> {
    core::COLLECTIVE_CODES.iter().map(|c| c.name()).collect()
}

#[pymodule]
fn _commcost(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Model>()?;
    m.add_function(wrap_pyfunction!(select, m)?)?;
    m.add_function(wrap_pyfunction!(table, m)?)?;
    m.add_function(wrap_pyfunction!(calibrate_osu, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(collectives, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
