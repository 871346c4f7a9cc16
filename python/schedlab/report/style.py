"""The report's stylesheet, inlined into the page (no external assets: works offline)."""

CSS = """
:root { --fg: #1d1f21; --muted: #5f6368; --line: #d9dce0; --head: #f3f4f6; --accent: #1a56a8;
        --pub: #fbf7ea; --warn: #9a3412; }
* { box-sizing: border-box; }
body { font: 15px/1.5 -apple-system, "Segoe UI", "DejaVu Sans", Helvetica, Arial, sans-serif;
       color: var(--fg); margin: 0 auto; max-width: 72rem; padding: 1.5rem 2rem 4rem; }
h1 { font-size: 1.7rem; margin: 0 0 .3rem; }
h2 { font-size: 1.35rem; margin: 2.5rem 0 .6rem; padding-top: .8rem;
     border-top: 2px solid var(--line); }
h3 { font-size: 1.1rem; margin: 1.8rem 0 .5rem; }
p, li { max-width: 60rem; }
a { color: var(--accent); }
code, .mono { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: .88em; }
.muted { color: var(--muted); }
.note { border-left: 4px solid var(--line); padding: .4rem .9rem; margin: .8rem 0;
        background: #fafafa; max-width: 60rem; }
.note.warn { border-left-color: var(--warn); }
.quick { background: #fff4e5; border: 1px solid #f0c36d; padding: .5rem .9rem; border-radius: 4px; }
table { border-collapse: collapse; margin: .6rem 0 .4rem; font-size: .9rem; }
caption { caption-side: top; text-align: left; font-weight: 600; padding: .2rem 0 .4rem; }
th, td { border: 1px solid var(--line); padding: .25rem .6rem; }
thead th { background: var(--head); font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.text { text-align: left; }
td.pub, th.pub { background: var(--pub); }
td.missing { color: var(--muted); font-style: italic; }
td.error { color: var(--warn); }
table.meta th { text-align: left; background: var(--head); }
.tablenote { font-size: .85rem; color: var(--muted); margin: 0 0 1rem; max-width: 60rem; }
figure { margin: 1rem 0; }
figure img { max-width: 100%; height: auto; border: 1px solid var(--line); }
figcaption { font-size: .85rem; color: var(--muted); }
nav.toc ul { padding-left: 1.2rem; }
footer { margin-top: 3rem; font-size: .8rem; color: var(--muted); }
"""
