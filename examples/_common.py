"""What the example programs share: the check for an optional package, and line charts
written as SVG (text, so the examples need no plotting library)."""

from __future__ import annotations

import importlib
import sys
from html import escape
from pathlib import Path

COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#7f7f7f")


def require(program: str, module: str, package: str, extra: str) -> None:
    """End ``program`` with the extra to install unless ``module`` can be imported."""
    try:
        importlib.import_module(module)
    except ImportError:
        sys.exit(f'examples/{program} needs {package}: pip install -e ".[{extra}]"')


def _ticks(low: float, high: float) -> list[float]:
    return [low + (high - low) * i / 4 for i in range(5)]


def _panel(
    x0: float, title: str, xlabel: str, ylabel: str, series: list, legend: str = "top"
) -> list[str]:
    """One chart 420 x 300 at ``x0``: ``series`` is [(label, xs, ys, style)], style "line",
    "dots" (a line with markers) or "dashed"; the legend at the "top" or "bottom" right."""
    left, top, width, height = x0 + 60, 40, 340, 210
    xs_all = [x for _, xs, _, _ in series for x in xs]
    ys_all = [y for _, _, ys, _ in series for y in ys]
    x_lo, x_hi = min(xs_all), max(xs_all)
    y_lo, y_hi = min(ys_all), max(ys_all)
    if x_hi == x_lo:
        x_hi = x_lo + 1
    pad = (y_hi - y_lo) * 0.05 or 1.0
    y_lo, y_hi = y_lo - pad, y_hi + pad

    def sx(x):
        return left + (x - x_lo) / (x_hi - x_lo) * width

    def sy(y):
        return top + height - (y - y_lo) / (y_hi - y_lo) * height

    out = [
        f'<text x="{left + width / 2}" y="24" text-anchor="middle" font-weight="bold">'
        f"{escape(title)}</text>",
        f'<rect x="{left}" y="{top}" width="{width}" height="{height}" fill="none" stroke="#999"/>',
        f'<text x="{left + width / 2}" y="{top + height + 36}" text-anchor="middle">'
        f"{escape(xlabel)}</text>",
        f'<text transform="translate({x0 + 14},{top + height / 2}) rotate(-90)" '
        f'text-anchor="middle">{escape(ylabel)}</text>',
    ]
    for t in _ticks(y_lo + pad, y_hi - pad):
        out.append(
            f'<text x="{left - 6}" y="{sy(t) + 4:.1f}" text-anchor="end" font-size="11">'
            f"{t:.3g}</text>"
        )
    whole = all(float(x).is_integer() for x in xs_all)
    for t in sorted({round(t) for t in _ticks(x_lo, x_hi)} if whole else _ticks(x_lo, x_hi)):
        out.append(
            f'<text x="{sx(t):.1f}" y="{top + height + 16}" text-anchor="middle" '
            f'font-size="11">{t:.3g}</text>'
        )
    for i, (label, xs, ys, style) in enumerate(series):
        colour = COLOURS[i % len(COLOURS)]
        points = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in zip(xs, ys))
        dash = ' stroke-dasharray="6,4"' if style == "dashed" else ""
        out.append(
            f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="1.5"{dash}/>'
        )
        if style == "dots":
            out += [
                f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="2.5" fill="{colour}"/>'
                for x, y in zip(xs, ys)
            ]
        ly = top + 14 + 16 * i if legend == "top" else top + height - 8 - 16 * (len(series) - 1 - i)
        out.append(
            f'<line x1="{left + width - 150}" y1="{ly - 4}" x2="{left + width - 130}" '
            f'y2="{ly - 4}" stroke="{colour}" stroke-width="2"{dash}/>'
            f'<text x="{left + width - 124}" y="{ly}" font-size="11">{escape(label)}</text>'
        )
    return out


def write_line_charts(path: Path, panels: list[tuple]) -> None:
    """Charts side by side in one SVG file: each panel is (title, xlabel, ylabel, series),
    series as in ``_panel``."""
    body = [line for i, p in enumerate(panels) for line in _panel(420 * i, *p)]
    width = 420 * len(panels)
    Path(path).write_text(
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="300" '
        f'viewBox="0 0 {width} 300" font-family="sans-serif" font-size="13">\n'
        '<rect width="100%" height="100%" fill="white"/>\n' + "\n".join(body) + "\n</svg>\n",
        encoding="utf-8",
    )
