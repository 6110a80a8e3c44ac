"""What the examples share for their command line: a progress bar per pass (on a terminal only,
so their printed output stays the same when piped or tested) and the optional loss plot
(--plot loss.png, with matplotlib when it is installed)."""

import sys


def progress(iterable, total, label, enabled=None):
    """Yields from `iterable`, drawing "label [#####.....] i/total" on stderr when it is a
    terminal (or `enabled`); the bar is erased at the end, leaving stdout's lines as they were."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled or total <= 0:
        yield from iterable
        return
    width = 30
    for i, item in enumerate(iterable, 1):
        yield item
        done = width * i // total
        sys.stderr.write("\r%s [%s%s] %d/%d" % (label, "#" * done, "." * (width - done), i, total))
        sys.stderr.flush()
    sys.stderr.write("\r" + " " * (len(label) + width + 4 + 2 * len(str(total)) + 2) + "\r")
    sys.stderr.flush()


def require_matplotlib(path):
    """Exits with a clear message before training when --plot is asked for without matplotlib."""
    if path is None:
        return
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise SystemExit(
            "--plot %s needs matplotlib, which is not installed (pip install matplotlib)" % path
        ) from None


def plot_losses(path, losses, ylabel="loss", title=None):
    """Writes the per-pass losses as a line plot to `path` (its extension picks the format)."""
    import matplotlib

    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(range(len(losses)), losses, marker="." if len(losses) < 60 else None)
    ax.set_xlabel("pass")
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    print("loss plot written to %s" % path)
