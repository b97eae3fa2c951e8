"""Plot a decision table: the best broadcast algorithm of Open MPI's tuned component for every
communicator size and message size, under a model.

    pip install ./python matplotlib      # or: maturin develop, in a virtual environment
    python python/examples/plot_decision_table.py [--model FILE | --preset NAME] [-o table.png]
"""

import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import commcost  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="model file (commcost calibrate, ModelSpec JSON)")
    parser.add_argument("--preset", default="open-mpi-openib")
    parser.add_argument("--collective", default="bcast")
    parser.add_argument("--family", default="ompi", choices=["ompi", "textbook"])
    parser.add_argument("-o", "--output", default="decision_table.png")
    args = parser.parse_args()
    model = commcost.Model.from_file(args.model) if args.model else commcost.Model.preset(args.preset)

    procs = [2 ** k for k in range(1, 11)]  # 2 .. 1024
    sizes = [2 ** k for k in range(0, 23)]  # 1 B .. 4 MiB
    rows = commcost.table(model, args.collective, procs, sizes, family=args.family, as_frame=False)
    # the algorithm without its parameters names the colour; the label keeps them
    names = sorted({r["algorithm"].split(":")[0] for r in rows})
    grid = np.zeros((len(procs), len(sizes)), dtype=int)
    for r in rows:
        grid[procs.index(r["processes"]), sizes.index(r["bytes"])] = names.index(
            r["algorithm"].split(":")[0])

    fig, ax = plt.subplots(figsize=(10, 5))
    cmap = plt.get_cmap("tab10", len(names))
    image = ax.imshow(grid, aspect="auto", origin="lower", cmap=cmap,
                      vmin=-0.5, vmax=len(names) - 0.5)
    ax.set_xticks(range(0, len(sizes), 2), [f"2^{k}" for k in range(0, 23, 2)])
    ax.set_yticks(range(len(procs)), [str(p) for p in procs])
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("processes")
    ax.set_title(f"best {args.collective} ({args.family}) under {model.name}")
    bar = fig.colorbar(image, ticks=range(len(names)))
    bar.ax.set_yticklabels(names)
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(f"wrote {args.output}: {len(names)} algorithms over {len(rows)} cells")


if __name__ == "__main__":
    main()
