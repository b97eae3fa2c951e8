"""Type stubs of the compiled core (``commcost._commcost``)."""

from os import PathLike
from typing import (
    Any,
    Dict,
    Iterable,
    Iterator,
    List,
    Optional,
    Sequence,
    Tuple,
    Union,
    overload,
)

import numpy as np
import numpy.typing as npt
from typing_extensions import final

__all__ = [
    "Model",
    "select",
    "table",
    "calibrate_osu",
    "simulate",
    "presets",
    "collectives",
    "__version__",
]

# a size: an int or an integral float (a fractional, negative or NaN one raises ValueError)
_Size = Union[int, float, np.integer[Any], np.floating[Any]]
# sizes: a (nested) list or tuple of sizes, a range, or a numpy array of an integer or float
# dtype; not a string, bytes or a generator (TypeError)
_Sizes = Union[
    List[int],
    List[float],
    Tuple[_Size, ...],
    Sequence[Sequence[_Size]],
    range,
    npt.NDArray[np.integer[Any]],
    npt.NDArray[np.floating[Any]],
]
_Path = Union[str, PathLike[str]]

@final
class Model:
    """A communication model (any model of commcost), immutable and thread-safe."""

    @staticmethod
    def preset(name: str) -> "Model":
        """An embedded parameter set (``presets()`` lists them)."""
    @staticmethod
    def from_file(path: _Path) -> "Model":
        """A model file, read as ``commcost --model`` reads it: a ModelSpec, a file written by
        ``commcost calibrate`` or several named models (``FILE#NAME``)."""
    @staticmethod
    def from_json(text: str) -> "Model": ...
    @staticmethod
    def from_dict(spec: Dict[str, Any]) -> "Model":
        """``{"model": "loggp", "latency": 5e-6, "overhead": 1e-6, ...}``; the error names
        the field."""
    def to_json(self) -> str: ...
    def __eq__(self, value: object, /) -> bool:
        """Equal parameters (the name is not compared)."""
    @overload
    def p2p(self, sizes: _Size) -> float: ...
    @overload
    def p2p(self, sizes: _Sizes) -> npt.NDArray[np.float64]:
        """End-to-end time (s) of contiguous messages; LogGP ``2o + L + (s - 1) G``."""
    @overload
    def send_overhead(self, sizes: _Size) -> float: ...
    @overload
    def send_overhead(self, sizes: _Sizes) -> npt.NDArray[np.float64]: ...
    @overload
    def recv_overhead(self, sizes: _Size) -> float: ...
    @overload
    def recv_overhead(self, sizes: _Sizes) -> npt.NDArray[np.float64]: ...
    @overload
    def send_interval(self, sizes: _Size) -> float: ...
    @overload
    def send_interval(self, sizes: _Sizes) -> npt.NDArray[np.float64]:
        """Minimum time between consecutive sends (s); LogGP ``max(o, g + (s - 1) G)``."""
    @overload
    def gap(self, sizes: _Size) -> float: ...
    @overload
    def gap(self, sizes: _Sizes) -> npt.NDArray[np.float64]: ...
    def quantities(
        self, block_len: int, count: Optional[int] = None, stride: Optional[int] = None
    ) -> Dict[str, float]:
        """``p2p``, ``send_overhead``, ``recv_overhead``, ``send_interval``, ``gap`` of
        ``count`` blocks of ``block_len`` bytes ``stride`` bytes apart."""
    def size_breakpoints(self) -> List[int]: ...
    @property
    def name(self) -> str: ...

def select(
    model: Model, collective: str, procs: int, nbytes: int, family: str = "ompi"
) -> List[Dict[str, Any]]: ...
def table(
    model: Model, collective: str, procs: Iterable[int], sizes: Iterable[int], family: str = "ompi"
) -> List[Dict[str, Any]]: ...
def calibrate_osu(
    paths: Union[List[_Path], Tuple[_Path, ...], Iterator[_Path]], overhead_share: float = 0.0
) -> Model: ...
def simulate(
    model: Model,
    collective: str,
    algorithm: str,
    procs: int,
    nbytes: int,
    family: str = "ompi",
    rendezvous: bool = False,
) -> Dict[str, Any]: ...
def presets() -> List[str]: ...
def collectives() -> List[str]: ...

__version__: str
