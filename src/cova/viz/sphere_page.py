"""A self-contained interactive HTML page of spherical embeddings: drag to rotate, wheel to zoom, hover for a
point's name and cohort. Plain JavaScript on a canvas (orthographic view, back hemisphere faded), no library and
no network access, so the page works offline and inside the Snakemake report."""

from __future__ import annotations

import html
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib.colors import to_hex

from ..io import write_text_atomic
from .scatter import cohort_colours
from .tables import page


@dataclass(frozen=True)
class SphereView:
    """One interactive panel: points ``Z`` (n × 3), their cohorts ``labels`` (``None``: one cohort) named by
    ``label_names``, optional point ``names`` and marker ``sizes`` (relative, largest 1). ``on_sphere``: every
    point is moved radially onto the unit sphere (a spherical embedding); otherwise the centred points are divided
    by their largest norm, so a ball stays a ball. ``show_names``: the names are written next to the points when
    the page opens (a checkbox toggles them; hovering shows a point's name either way)."""

    title: str
    Z: np.ndarray
    labels: np.ndarray | None
    label_names: Sequence[str]
    names: Sequence[str] | None = None
    sizes: np.ndarray | None = None
    on_sphere: bool = True
    show_names: bool = True


def _view_data(v: SphereView) -> dict:
    Z = np.asarray(v.Z, dtype=np.float64)
    finite = bool(np.all(np.isfinite(Z))) and len(Z) > 0
    if finite:
        Z = Z - Z.mean(axis=0)
        radius = np.linalg.norm(Z, axis=1)
        if v.on_sphere:
            Z = Z / np.where(radius > 0, radius, 1.0)[:, None]  # the unit sphere, as the DOSNES demo shows it
        else:
            Z = Z / max(float(radius.max()), 1e-300)
    labels = np.zeros(len(Z), dtype=np.int64) if v.labels is None else np.asarray(v.labels)
    names = list(v.label_names) or ["all"]
    sizes = np.ones(len(Z)) if v.sizes is None else np.asarray(v.sizes, dtype=np.float64)
    return {"title": v.title, "finite": finite, "xyz": np.round(Z, 5).tolist() if finite else [],
            "label": labels.tolist(), "labelNames": names,
            "colours": [to_hex(c) for c in cohort_colours(len(names))],
            "names": list(v.names) if v.names is not None else [], "size": np.round(sizes, 4).tolist(),
            "showNames": bool(v.show_names)}


_SCRIPT = r"""
function drawView(el, d) {
  const cv = el.querySelector('canvas'), tip = el.querySelector('.tip'), ctx = cv.getContext('2d');
  let R = [[1,0,0],[0,1,0],[0,0,1]], zoom = 1, drag = null, shown = [];
  function rot(ax, a) { const c = Math.cos(a), s = Math.sin(a);
    return ax === 'x' ? [[1,0,0],[0,c,-s],[0,s,c]] : [[c,0,s],[0,1,0],[-s,0,c]]; }
  function mul(A, B) { return A.map(r => [0,1,2].map(j => r[0]*B[0][j] + r[1]*B[1][j] + r[2]*B[2][j])); }
  function draw() {
    const w = cv.width, h = cv.height, s = 0.42 * Math.min(w, h) * zoom;
    ctx.clearRect(0, 0, w, h);
    ctx.strokeStyle = '#bbb'; ctx.beginPath(); ctx.arc(w/2, h/2, s, 0, 2*Math.PI); ctx.stroke();
    if (!d.finite) { ctx.fillText('no embedding (degenerate run)', 10, 20); return; }
    shown = d.xyz.map((p, i) => { const q = R.map(r => r[0]*p[0] + r[1]*p[1] + r[2]*p[2]);
      return {i: i, x: w/2 + s*q[0], y: h/2 - s*q[1], z: q[2]}; });
    shown.sort((a, b) => a.z - b.z);
    for (const p of shown) {
      ctx.globalAlpha = p.z < 0 ? 0.15 : 0.9;
      ctx.fillStyle = d.colours[d.label[p.i]];
      ctx.beginPath(); ctx.arc(p.x, p.y, 1.5 + 5*d.size[p.i], 0, 2*Math.PI); ctx.fill();
      if (d.names.length && p.z > 0.3 && el.querySelector('.names').checked) {
        ctx.globalAlpha = 0.8; ctx.fillStyle = '#222'; ctx.fillText(d.names[p.i], p.x + 4, p.y - 3); }
    }
    ctx.globalAlpha = 1;
  }
  cv.addEventListener('mousedown', e => { drag = [e.offsetX, e.offsetY]; });
  window.addEventListener('mouseup', () => { drag = null; });
  cv.addEventListener('mousemove', e => {
    if (drag) { R = mul(rot('x', (e.offsetY - drag[1]) / 150), mul(rot('y', (e.offsetX - drag[0]) / 150), R));
      drag = [e.offsetX, e.offsetY]; draw(); return; }
    let best = null, bd = 64;
    for (const p of shown) { const dd = (p.x - e.offsetX)**2 + (p.y - e.offsetY)**2;
      if (p.z >= 0 && dd < bd) { bd = dd; best = p; } }
    tip.textContent = best ? (d.names.length ? d.names[best.i] + ' \u2014 ' : '') + d.labelNames[d.label[best.i]] : '';
  });
  cv.addEventListener('wheel', e => { e.preventDefault(); zoom *= Math.exp(-e.deltaY / 500); draw(); });
  el.querySelector('.names').addEventListener('change', draw);
  draw();
}
document.querySelectorAll('.view').forEach((el, k) => drawView(el, VIEWS[k]));
"""


def sphere_page(views: Sequence[SphereView], title: str, intro_html: str = "", table_html: str = "") -> str:
    """The page (:func:`cova.viz.tables.page`): ``title``, ``intro_html``, one interactive panel per view with its
    legend, then ``table_html`` (both markup the caller built, its texts escaped)."""
    data = [_view_data(v) for v in views]
    panels = []
    for d in data:
        legend = " ".join(f"<span style='color:{c}'>&#9679;</span>&nbsp;{html.escape(n)}"
                          for c, n in zip(d["colours"], d["labelNames"]))
        panels.append(f"<div class='view'><h2>{html.escape(d['title'])}</h2>"
                      "<canvas width='560' height='560'></canvas><div class='tip'>&nbsp;</div>"
                      f"<label><input type='checkbox' class='names'{' checked' if d['showNames'] else ''}> names"
                      "</label>"
                      f"<p class='legend'>{legend}</p></div>")
    style = (".view{display:inline-block;vertical-align:top;margin:0 16px 16px 0}"
             "canvas{border:1px solid #ddd;cursor:grab} .tip{height:1.2em;font-size:90%} .legend{max-width:560px;"
             "font-size:85%} .view h2{font-size:110%}")
    views_json = json.dumps(data, separators=(",", ":")).replace("<", "\\u003c")  # no tag or comment in the script
    body = (f"{intro_html}<p>Drag to rotate, scroll to zoom, hover over a point for its name and cohort. Spherical "
            "embeddings are shown on the unit sphere, others scaled into the unit ball; points behind the centre are "
            f"faded.</p>{''.join(panels)}{table_html}<script>const VIEWS={views_json};{_SCRIPT}</script>")
    return page(title, body, style)


def write_sphere_page(path: str | os.PathLike, views: Sequence[SphereView], title: str, intro_html: str = "",
                      table_html: str = "") -> None:
    """Write :func:`sphere_page` atomically to ``path``."""
    write_text_atomic(path, sphere_page(views, title, intro_html, table_html))
