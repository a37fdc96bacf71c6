"""The report as a small document: sections of paragraphs, tables, lists, preformatted lines and images,
rendered once to Markdown (summary.md) and once to self-contained HTML (report.html, images inline).
Images and event logs are for the full report only: summary.md is also what scripts/demo.sh prints.
"""

import base64
import html
from dataclasses import dataclass, field
from pathlib import Path

VERDICT_COLOURS = {"PASS": "#2ca02c", "FAIL": "#d62728"}  # anything else: orange
STYLE = (
    "body{font-family:sans-serif;max-width:1100px;margin:auto;padding:1em}table{border-collapse:collapse}"
    "td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}.ok{color:#2ca02c}.fail{color:#d62728}"
    "img{max-width:100%}pre{white-space:pre-wrap;font-size:85%}"
)


@dataclass
class Table:
    header: list[str]
    rows: list[list[str]]


@dataclass
class Item:
    text: str
    label: str = ""  # "ok", "FAIL", "WARNING:", "note:" ... before the text
    state: str = ""  # "ok" or "fail": the HTML colour


@dataclass
class Items:
    items: list[Item]
    empty: str = ""  # said when there is no item; the list is left out when this is empty too


@dataclass
class Pre:
    lines: list[str]


@dataclass
class Image:
    name: str
    path: Path


@dataclass
class Section:
    title: str  # "" for the opening paragraph
    blocks: list = field(default_factory=list)  # str (a paragraph), Table, Items, Pre, Image, Section
    full_report_only: bool = False


@dataclass
class Document:
    title: str
    verdict: str
    sections: list[Section]


def _visible(block) -> bool:
    return not isinstance(block, Items) or bool(block.items or block.empty)


def render_markdown(doc: Document) -> str:
    lines = [f"# {doc.title}: {doc.verdict}"]

    def add(block, level):
        if isinstance(block, Section):
            if block.full_report_only or not any(_visible(b) for b in block.blocks):
                return
            if block.title:
                lines.extend(["", f"{'#' * level} {block.title}"])
            for b in block.blocks:
                add(b, level + 1)
        elif isinstance(block, str):
            lines.extend(["", block])
        elif isinstance(block, Table):
            lines.extend(["", "|" + "".join(f" {h} |" if h else " |" for h in block.header), "|---|" + "---|" * (len(block.header) - 1)])
            lines.extend("| " + " | ".join(row) + " |" for row in block.rows)
        elif isinstance(block, Items) and _visible(block):
            lines.append("")
            lines.extend(f"- {i.label:<4} {i.text}" if i.label else f"- {i.text}" for i in block.items)
            if not block.items:
                lines.append(f"- {block.empty}")
        elif isinstance(block, Pre):
            lines.extend(["", "```", *block.lines, "```"])

    for section in doc.sections:
        add(section, 2)
    return "\n".join(lines) + "\n"


def render_html(doc: Document) -> str:
    esc = html.escape
    colour = VERDICT_COLOURS.get(doc.verdict, "#ff7f0e")
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>liveness-lab report</title><style>{STYLE}</style></head><body>",
        f"<h1>{esc(doc.title)}: <span style='color:{colour}'>{esc(doc.verdict)}</span></h1>",
    ]

    def add(block, level):
        if isinstance(block, Section):
            if not any(_visible(b) for b in block.blocks):
                return
            if block.title:
                parts.append(f"<h{level}>{esc(block.title)}</h{level}>")
            for b in block.blocks:
                add(b, level + 1)
        elif isinstance(block, str):
            parts.append(f"<p>{esc(block)}</p>")
        elif isinstance(block, Table):
            parts.append("<table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in block.header) + "</tr>")
            parts.extend("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in block.rows)
            parts.append("</table>")
        elif isinstance(block, Items) and _visible(block):
            parts.append("<ul>")
            for i in block.items or [Item(block.empty)]:
                cls = f" class='{i.state}'" if i.state else ""
                parts.append(f"<li{cls}>{esc((i.label + ' ' if i.label else '') + i.text)}</li>")
            parts.append("</ul>")
        elif isinstance(block, Pre):
            parts.append("<pre>" + "".join(esc(line) + "\n" for line in block.lines) + "</pre>")
        elif isinstance(block, Image):
            data = base64.b64encode(block.path.read_bytes()).decode("ascii")
            parts.append(f"<img alt='{esc(block.name)}' src='data:image/png;base64,{data}'>")

    for section in doc.sections:
        add(section, 2)
    parts.append("</body></html>")
    return "".join(parts)
