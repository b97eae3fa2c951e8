"""Type stubs of the ``commcost`` package."""

from typing import Any, Dict, Iterable, List, Optional, Union

from ._commcost import Model as Model
from ._commcost import __version__ as __version__
from ._commcost import calibrate_osu as calibrate_osu
from ._commcost import collectives as collectives
from ._commcost import presets as presets

__all__ = [
    "Model",
    "__version__",
    "calibrate_osu",
    "collectives",
    "presets",
    "select",
    "simulate",
    "table",
]

_Rows = Union[List[Dict[str, Any]], Any]  # a pandas DataFrame when pandas is installed

def select(
    model: Model,
    collective: str,
    procs: int,
    nbytes: int,
    family: str = "ompi",
    as_frame: Optional[bool] = None,
) -> _Rows: ...
def table(
    model: Model,
    collective: str,
    procs: Iterable[int],
    sizes: Iterable[int],
    family: str = "ompi",
    as_frame: Optional[bool] = None,
) -> _Rows: ...
def simulate(
    model: Model,
    collective: str,
    algorithm: str,
    procs: int,
    nbytes: int,
    family: str = "ompi",
    rendezvous: bool = False,
) -> Dict[str, Any]: ...
