"""Checked by mypy against the installed stubs, not run by pytest (CI: ``mypy --strict
python/tests/typing_check.py``): the uses the package accepts type-check, and each use it
refuses is flagged, so that a stub admitting it leaves an unused ``type: ignore`` (an error
under ``warn_unused_ignores``)."""

from pathlib import Path

import numpy as np
import numpy.typing as npt

import commcost

m: commcost.Model = commcost.Model.preset("open-mpi-openib")
one: float = m.p2p(8)
also_one: float = m.p2p(np.int64(8))
whole: float = m.p2p(8.0)
many: npt.NDArray[np.float64] = m.p2p([1, 2, 3])
nested: npt.NDArray[np.float64] = m.p2p([[1, 2], [3, 4]])
arr: npt.NDArray[np.float64] = m.p2p(np.arange(1, 10, dtype=np.uint64))
q: dict[str, float] = m.quantities(64, count=2, stride=128)
same: bool = m == commcost.Model.from_file(Path("model.json"))
named = commcost.Model.from_file("model.json#loggp_mpi")
rows = commcost.select(m, "bcast", 4, 8, family="textbook", as_frame=False)
grid = commcost.table(m, "bcast", range(2, 9), [8, 64])
fit = commcost.calibrate_osu([Path("osu_latency.txt"), "osu_bw.txt"])
run = commcost.simulate(m, "bcast", "binomial", 4, 8)
version: str = commcost.__version__

# refused at run time (TypeError), and by the stubs
m.p2p("8")  # type: ignore
m.p2p(b"8")  # type: ignore
m.p2p(i for i in [1, 2])  # type: ignore
commcost.calibrate_osu("osu_latency.txt")  # type: ignore
commcost.select(m, "bcast", 4, "8")  # type: ignore
commcost.select(m, "bcast", 4, 8, family=None)  # type: ignore
commcost.table(m, "bcast", "48", [8])  # type: ignore
