"""How liveness-lab draws a variant and a probe event, in one place: report.html's plots (matplotlib,
``report/build.py``) and the web UI's Live tab (``webui/``, which reads this through
``GET /liveness-lab/live``) use these, so a variant has one colour everywhere.

Colours are the Okabe-Ito palette (Okabe and Ito, "Color Universal Design", 2008), told apart with
every common colour-vision deficiency and in greyscale; the variants take them in the variant table's
order (blocking, reactive, offloaded, virtual, servlet, servlet-async, servlet-virtual). Within a variant's
chart the lines are its colour and differ by dash; the probe events are drawn in black, each with its own dash and symbol, so they never
read as another variant.
"""

from .variants import TABLE

# Okabe-Ito: vermillion, blue, bluish green, reddish purple, orange, sky blue, yellow (black is the events').
PALETTE = ["#D55E00", "#0072B2", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442"]
VARIANT_COLOURS = {v.name: PALETTE[i % len(PALETTE)] for i, v in enumerate(TABLE)}
REFERENCE_COLOUR = "#555555"  # the requested latency, the pods' total

# matplotlib's "X" (a filled cross) as an echarts path symbol; `rotate` turns echarts' triangle into "v".
KILL_PATH = "path://M2,0L5,3L8,0L10,2L7,5L10,8L8,10L5,7L2,10L0,8L3,5L0,2Z"
# Probe events, as vertical lines on a variant's chart. `dash` is a matplotlib linestyle and an echarts
# lineStyle.type alike; `symbol` is matplotlib's marker and, in `echarts`, echarts' symbol for it;
# `hollow`: its outline only. A failure's marker also carries its countdown ("2/3", base/countdown.py),
# written by its symbol.
MARKERS = {
    "failure": {
        "label": "liveness failure",
        "colour": "#000000",
        "dash": "dotted",
        "width": 1.0,
        "symbol": "v",
        "echarts": "triangle",
        "rotate": 180,
    },
    # A failure no event of its own reported, placed from the kill that followed it (base/countdown.py):
    # the failure's symbol, hollow, and a fainter line.
    "unreported": {
        "label": "liveness failure, no event",
        "colour": "#000000",
        "dash": "dotted",
        "width": 0.6,
        "symbol": "v",
        "echarts": "triangle",
        "rotate": 180,
        "hollow": True,
    },
    "kill": {
        "label": "liveness kill",
        "colour": "#000000",
        "dash": "dashed",
        "width": 1.6,
        "symbol": "X",
        "echarts": KILL_PATH,
        "rotate": 0,
    },
    "restart": {
        "label": "container restart",
        "colour": "#000000",
        "dash": "solid",
        "width": 2.0,
        "symbol": "o",
        "echarts": "circle",
        "rotate": 0,
    },
}


def variant_colour(name: str) -> str:
    """VARIANT's colour; a name outside the table (an old recording) gets the next free one."""
    if name in VARIANT_COLOURS:
        return VARIANT_COLOURS[name]
    return PALETTE[(len(VARIANT_COLOURS) + sum(map(ord, name))) % len(PALETTE)]
