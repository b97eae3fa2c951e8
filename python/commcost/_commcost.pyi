"""Type stubs of the compiled core (``commcost._commcost``)."""

from os import PathLike
from typing import Any, Dict, Iterable, List, Optional, Union, overload

import numpy as np
import numpy.typing as npt

Sizes = Union[npt.ArrayLike, Iterable[int]]

class Model:
    """A communication model (any model of commcost), immutable and thread-safe."""

    @staticmethod
    def preset(name: str) -> "Model":
        """An embedded parameter set (``presets()`` lists them)."""
    @staticmethod
    def from_file(path: Union[str, PathLike[str]]) -> "Model":
        """A ModelSpec JSON file or a model file written by ``commcost calibrate``."""
    @staticmethod
    def from_json(text: str) -> "Model": ...
    @staticmethod
    def from_dict(spec: Dict[str, Any]) -> "Model":
        """``{"model": "loggp", "latency": 5e-6, "overhead": 1e-6, ...}``; the error names
        the field."""
    def to_json(self) -> str: ...
    def __eq__(self, other: object) -> bool:
        """Equal parameters (the name is not compared)."""
    @overload
    def p2p(self, sizes: Union[int, np.integer[Any]]) -> float: ...
    @overload
    def p2p(self, sizes: Sizes) -> npt.NDArray[np.float64]:
        """End-to-end time (s) of contiguous messages; LogGP ``2o + L + (s - 1) G``."""
    @overload
    def send_overhead(self, sizes: Union[int, np.integer[Any]]) -> float: ...
    @overload
    def send_overhead(self, sizes: Sizes) -> npt.NDArray[np.float64]: ...
    @overload
    def recv_overhead(self, sizes: Union[int, np.integer[Any]]) -> float: ...
    @overload
    def recv_overhead(self, sizes: Sizes) -> npt.NDArray[np.float64]: ...
    @overload
    def send_interval(self, sizes: Union[int, np.integer[Any]]) -> float: ...
    @overload
    def send_interval(self, sizes: Sizes) -> npt.NDArray[np.float64]:
        """Minimum time between consecutive sends (s); LogGP ``max(o, g + (s - 1) G)``."""
    @overload
    def gap(self, sizes: Union[int, np.integer[Any]]) -> float: ...
    @overload
    def gap(self, sizes: Sizes) -> npt.NDArray[np.float64]: ...
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
    paths: Iterable[Union[str, PathLike[str]]], overhead_share: float = 0.0
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
