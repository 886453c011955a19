"""Chart axes in round units, for the pictures and HTML reports (matplotlib)."""

from __future__ import annotations

UNITS = ((1e6, "millions"), (1e3, "thousands"), (1.0, ""))


def round_axis(axis, values: list[float]) -> str:
    """Set the y axis of `axis` to ticks at round values in the unit its
    largest value calls for; returns the unit ("", "thousands", "millions").
    A tick is written with the decimals its step needs (0.25, not 0), and
    zero never as −0."""
    import math

    from matplotlib.ticker import FuncFormatter, MaxNLocator

    peak = max((abs(v) for v in values), default=0.0)
    scale, unit = next(((s, u) for s, u in UNITS if peak >= s), UNITS[-1])
    axis.yaxis.set_major_locator(MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10]))

    def text(v: float, _pos: int) -> str:
        ticks = axis.yaxis.get_majorticklocs()
        steps = [abs(y - x) for x, y in zip(ticks, ticks[1:], strict=False) if y != x]
        step = min(steps, default=scale) / scale
        places = 0
        while places < 6 and abs(step * 10 ** places - round(step * 10 ** places)) > 1e-6:
            places += 1
        x = v / scale
        if abs(x) < 0.5 * 10 ** -places or math.isclose(x, 0.0, abs_tol=1e-12):
            x = 0.0
        return f"{x:,.{places}f}".replace("-", "\u2212")

    axis.yaxis.set_major_formatter(FuncFormatter(text))
    return unit
