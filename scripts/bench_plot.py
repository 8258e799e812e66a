# SPDX-License-Identifier: GPL-2.0
"""bench_plot.py: the figures of the benchmark reports, drawn from their data.

Used by bench_report.py and bench_middleware_report.py.  Each figure is a
row of panels: plot() draws in each a line per device (shca and rdma_rxe)
of the median against the message size, bars() a group of bars per test;
the min-max range of the repetitions as error bars.  SVG with no date and a fixed id salt, so
the same data draws the same file.  matplotlib comes from Debian
(python3-matplotlib); without it, plot() returns None and the report says
so.
"""
import importlib.util

COLORS = {'shca': '#1f6fb4', 'rxe': '#d6612b'}


def _order(devs):
    """shca first, then rxe, then any other device by name."""
    return sorted(devs, key=lambda d: (d not in COLORS, d != 'shca', d))


def available():
    return importlib.util.find_spec('matplotlib') is not None


def _pyplot():
    """matplotlib.pyplot, drawing to files, with the reports' settings."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    matplotlib.rcParams['svg.hashsalt'] = 'shca-bench'
    matplotlib.rcParams['font.size'] = 9
    return plt


def _save(plt, fig, axes, path, note):
    """Legend, the note under the panels; write the SVG, free the figure."""
    axes[0][0].legend()
    if note:
        fig.text(0.01, 0.01, note, fontsize=7, color='#555555')
        fig.tight_layout(rect=(0, 0.06, 1, 1))
    else:
        fig.tight_layout()
    fig.savefig(path, format='svg', metadata={'Date': None})
    plt.close(fig)
    return path


def plot(path, panels, ylabel, xlabel='message size', logy=True,
         note=None):
    """Write an SVG of panels to path.

    panels: [(title, {device: [(x, median, lo, hi), ...]}, xticklabels)],
    xticklabels mapping each x to its label.  note: a text under the
    panels.  Returns path, or None when matplotlib is missing or there is
    nothing to draw.
    """
    if not available() or not any(series for _, series, _ in panels):
        return None
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(panels), figsize=(3.4 * len(panels), 3.2),
                             squeeze=False)
    for ax, (title, series, ticks) in zip(axes[0], panels):
        for dev in _order(series):
            pts = sorted(p for p in series[dev] if p[1] is not None)
            if not pts:
                continue
            xs = [p[0] for p in pts]
            ys = [p[1] for p in pts]
            err = [[p[1] - p[2] for p in pts], [p[3] - p[1] for p in pts]]
            ax.errorbar(xs, ys, yerr=err, marker='o', markersize=4,
                        capsize=3, label=dev, color=COLORS.get(dev))
        ax.set_xscale('log', base=2)
        if logy:
            ax.set_yscale('log')
        ax.set_xticks(sorted(ticks))
        ax.set_xticklabels([ticks[x] for x in sorted(ticks)])
        ax.tick_params(axis='x', which='minor', bottom=False)
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.grid(True, which='major', alpha=0.3)
    axes[0][0].set_ylabel(ylabel)
    return _save(plt, fig, axes, path, note)


def bars(path, panels, note=None):
    """Write an SVG of grouped bars to path.

    panels: [(title, ylabel, [(label, {device: (median, lo, hi)})])], a
    group of bars per label, one bar per device.  Returns path, or None
    when matplotlib is missing or there is nothing to draw.
    """
    if not available() or not any(groups for _, _, groups in panels):
        return None
    plt = _pyplot()
    widths = [max(len(g), 1) for _, _, g in panels]
    fig, axes = plt.subplots(1, len(panels), squeeze=False,
                             figsize=(1.6 * sum(widths) + 1.2, 3.2),
                             gridspec_kw={'width_ratios': widths})
    for ax, (title, ylabel, groups) in zip(axes[0], panels):
        devs = _order({d for _, v in groups for d in v})
        w = 0.8 / max(len(devs), 1)
        for i, dev in enumerate(devs):
            xs, ys, lo, hi = [], [], [], []
            for j, (_, v) in enumerate(groups):
                if dev not in v or v[dev][0] is None:
                    continue
                m, a, b = v[dev]
                xs.append(j + (i - (len(devs) - 1) / 2) * w)
                ys.append(m)
                lo.append(m - a)
                hi.append(b - m)
            ax.bar(xs, ys, w, yerr=[lo, hi], capsize=3, label=dev,
                   color=COLORS.get(dev))
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels([g[0] for g in groups])
        ax.set_title(title)
        ax.set_ylabel(ylabel)
        ax.grid(True, axis='y', alpha=0.3)
    return _save(plt, fig, axes, path, note)
