"""commcost: predict communication costs in parallel programs.

LogP-family models behind one interface, collective algorithm selection with Open MPI's and
MPICH's algorithm ids and names, calibration from OSU Micro-Benchmarks output, and a LogGOPS
schedule simulator. The compiled core is the Rust crate ``commcost``; every time is in seconds,
every size in bytes.

Models (``Model``):

* ``Model.preset(name)``, ``Model.from_file(path)``, ``Model.from_json(text)``,
  ``Model.from_dict(spec)``.
* ``model.p2p(sizes)``: end-to-end time of contiguous messages, vectorised over numpy arrays
  (no Python loop). For LogGP (Alexandrov, Ionescu, Schauser, Scheiman, "LogGP: Incorporating
  Long Messages into the LogP Model", SPAA 1995): ``T(s) = 2o + L + (s - 1) G``.
* ``send_overhead``, ``recv_overhead``, ``send_interval`` (LogGP ``max(o, g + (s - 1) G)``),
  ``gap``: the other per-message quantities, vectorised the same way.

Collectives: ``select`` ranks every algorithm of a collective, ``table`` tabulates the best one
over a grid; both return a list of dicts, or a pandas DataFrame when pandas is installed and
``as_frame`` is not False. ``family="ompi"`` (the default, as in the command-line tool and the
C ABI) prices Open MPI's tuned algorithms (with their ``ompi_id``), ``family="textbook"`` the
algorithms of Thakur, Rabenseifner & Gropp, "Optimization of collective communication
operations in MPICH", IJHPCA 19(1), 2005, and ``family="mpich"`` those of them MPICH runs,
under MPICH's names.

``simulate`` runs one algorithm's message schedule in the LogGOPS simulator (Hoefler,
Schneider, Lumsdaine, "LogGOPSim", HPDC/LSAP 2010) and returns the makespan, the finish time
of every rank and the timeline as arrays.
"""

from . import _commcost
from ._commcost import Model, __version__, calibrate_osu, collectives, presets

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


def _frame(rows, as_frame):
    if as_frame is False:
        return rows
    try:
        import pandas
    except ImportError:
        if as_frame:
            raise
        return rows
    return pandas.DataFrame(rows)


def select(model, collective, procs, nbytes, family="ompi", as_frame=None):
    """Every candidate algorithm of ``collective`` on ``procs`` processes for ``nbytes``-byte
    messages, cheapest first.

    Rows: ``algorithm`` (commcost's name, e.g. ``chain:segment=8192,fanout=4``), ``cost``
    (seconds), ``ompi_id``, ``ompi_name``, ``segment``, ``fanout`` (Open MPI's rules-file
    fields; 0 and ``""`` in the textbook family), ``mpich_name`` (None where MPICH has no such
    algorithm). A pandas DataFrame when pandas is installed (``as_frame=None``), else a list
    of dicts; ``as_frame=False`` always gives the list.
    """
    return _frame(_commcost.select(model, collective, procs, nbytes, family), as_frame)


def table(model, collective, procs, sizes, family="ompi", as_frame=None):
    """The best algorithm of ``collective`` at every ``(processes, bytes)`` of the grid
    ``procs`` x ``sizes`` (both strictly increasing), with the rows of ``select`` plus
    ``processes`` and ``bytes``."""
    return _frame(_commcost.table(model, collective, procs, sizes, family), as_frame)


def simulate(model, collective, algorithm, procs, nbytes, family="ompi", rendezvous=False):
    """Simulates the message schedule of ``algorithm`` (a name as ``select`` prints it) in the
    LogGOPS simulator.

    Returns a dict: ``makespan`` (seconds), ``rank_finish`` (array, seconds per rank) and the
    timeline as arrays over operations: ``rank``, ``kind`` (0 send, 1 receive, 2 calc),
    ``peer`` (-1 for calc), ``bytes``, ``start``, ``end`` (seconds). ``rendezvous=True`` makes
    messages above the model's eager limit wait for their receive.
    """
    return _commcost.simulate(model, collective, algorithm, procs, nbytes, family, rendezvous)
