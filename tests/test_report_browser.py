"""The HTML report and the experiment pages as a reader sees them: opened in headless Chromium (Debian's
``chromium``; .ci/run installs it), after the pages' scripts ran and laid them out.

:func:`read_page` loads a page with a small script appended that lists every heading, caption, table header and
navigation entry whose text does not fit its box (``scrollWidth > clientWidth``: cut off or hidden behind an
ellipsis), and returns the page's visible text with that list. The test here shows the check finds a clipped
title and passes a fitting one; tests/test_workflow.py runs :func:`check_report` on the report of its
config/ci.yaml run (the front page and one experiment page per paper), so that the workflow runs once.

Without chromium the tests skip, saying why; under CI=true they fail instead.
"""

from __future__ import annotations

import base64
import html
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import requirements

#: What docutils writes into a page in place of markup it could not read.
SYSTEM_MESSAGE = "System Message"
#: Elements holding titles: a clipped one loses words a reader needs.
TITLES = "h1, h2, h3, h4, h5, h6, caption, figcaption, th, legend, summary, nav li, nav a"
#: Appended to a page: after its scripts ran, list the titles that do not fit their box.
_PROBE = """
<script>
window.addEventListener("load", () => setTimeout(() => {
  const clipped = [];
  for (const el of document.querySelectorAll(%s)) {
    const style = getComputedStyle(el);
    if (style.display === "none" || style.display === "inline" || el.getClientRects().length === 0) continue;
    if (el.scrollWidth > el.clientWidth + 1) {
      clipped.push({tag: el.tagName.toLowerCase(), text: el.textContent.trim().slice(0, 120),
                    scrollWidth: el.scrollWidth, clientWidth: el.clientWidth});
    }
  }
  const out = document.createElement("pre");
  out.id = "title-probe";
  out.textContent = JSON.stringify({clipped: clipped, text: document.body.innerText});
  document.body.appendChild(out);
}, 500));
</script>
""" % json.dumps(TITLES)


def chromium() -> str:
    """Chromium's executable; skips without it, or fails under CI=true, where .ci/run installs it."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    reason = "chromium not found: install Debian's chromium package (apt-get install chromium; .ci/run does)"
    requirements.unavailable("the browser test", reason)


def read_page(page: Path, width: int = 1280, height: int = 900) -> dict:
    """Open ``page`` (an HTML file) in headless Chromium at ``width`` x ``height`` pixels; return ``text`` (what
    the reader sees once its scripts ran) and ``clipped`` (the titles that do not fit their box: tag, text,
    scrollWidth, clientWidth)."""
    with tempfile.TemporaryDirectory() as tmp:
        probed = Path(tmp, page.name)
        source = page.read_text(errors="replace")
        cut = source.lower().rfind("</body>")
        probed.write_text(source[:cut] + _PROBE + source[cut:] if cut >= 0 else source + _PROBE)
        # The page's own relative links (images, other pages) resolve against its directory.
        base = f'<base href="{page.resolve().parent.as_uri()}/">'
        probed.write_text(probed.read_text().replace("<head>", "<head>" + base, 1))
        proc = subprocess.run(
            [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             f"--user-data-dir={tmp}/profile", "--run-all-compositor-stages-before-draw",
             "--virtual-time-budget=15000", f"--window-size={width},{height}", "--dump-dom", probed.as_uri()],
            capture_output=True, text=True, timeout=120)
    found = re.search(r'<pre id="title-probe">(.*?)</pre>', proc.stdout, re.S)
    assert found, f"chromium did not run the page's scripts on {page}:\n{proc.stderr[-2000:]}"
    return json.loads(html.unescape(found.group(1)))


def report_data(report: Path, name: str) -> dict:
    """A variable of the Snakemake report's page: ``results`` (path -> name, labels, caption, data_uri, ...) or
    ``categories`` (category -> subcategory -> paths)."""
    source = report.read_text(errors="replace")
    start = source.rindex(f"var {name} = ") + len(f"var {name} = ")
    return json.JSONDecoder().raw_decode(source[start:])[0]


def embedded(record: dict) -> bytes:
    """The content of a file the report embeds (its record in ``report_data(report, "results")``)."""
    return base64.b64decode(record["data_uri"].split("base64,", 1)[1])


def experiment_pages(workdir: Path) -> dict[str, Path]:
    """One experiment page per paper of a run: the first (by name) under results/paper/<paper>/."""
    pages = {}
    for folder in sorted((workdir / "results/paper").iterdir()):
        first = sorted(folder.glob("*.html"))
        if first:
            pages[folder.name] = first[0]
    return pages


def check_report(report: Path, workdir: Path, papers: list[str]) -> None:
    """The report's front page and one experiment page of each of ``papers`` read clean: no docutils system
    message, no clipped title; the front page links the scorecard and the timings."""
    front = read_page(report)
    assert SYSTEM_MESSAGE not in front["text"], "the report's front page shows a docutils system message"
    assert not front["clipped"], f"clipped titles on the report's front page: {front['clipped']}"
    for link in ("scorecard.html", "timings.html"):
        assert link in front["text"], f"the report's front page does not link {link}"
    pages = experiment_pages(workdir)
    assert sorted(pages) == sorted(papers), f"experiment pages of {sorted(pages)}, expected one per {papers}"
    for paper, page in pages.items():
        seen = read_page(page)
        assert SYSTEM_MESSAGE not in seen["text"], f"{page} shows a docutils system message"
        assert not seen["clipped"], f"clipped titles on {page}: {seen['clipped']}"


def test_a_clipped_title_is_found_and_a_fitting_one_passes(tmp_path):
    """The probe is what decides: a heading cut off by its box is reported, the same heading wrapping is not."""
    title = "NeRV Figs. 4-7 analogue on the noisy S-curve, smoothed precision against smoothed recall"
    page = tmp_path / "page.html"
    page.write_text(f"""<!DOCTYPE html><html><head><title>t</title></head><body>
<div style="width: 200px"><h2 style="white-space: nowrap; overflow: hidden; text-overflow: ellipsis">{title}</h2>
<h3>{title}</h3></div></body></html>""")
    seen = read_page(page)
    assert [c["tag"] for c in seen["clipped"]] == ["h2"]
    assert seen["clipped"][0]["clientWidth"] <= 200 < seen["clipped"][0]["scrollWidth"]
    assert title in seen["text"] and SYSTEM_MESSAGE not in seen["text"]
