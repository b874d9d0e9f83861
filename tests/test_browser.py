"""The notebooks where learners open them: JupyterLab, in a real (headless) Chromium.

One JupyterLab server on a free loopback port, with a token, serves a
temporary copy of ``notebooks/`` (so running them never rewrites the stored
notebooks; the rest of the repository is linked in, so relative paths hold).
Playwright drives the system's Chromium (Debian's ``chromium`` package;
``playwright install`` downloads are not used). For every notebook: open it,
Run All, wait until no cell is queued or running and the kernel is idle, and
read the outputs JupyterLab holds: an error output is a failure unless its
cell is tagged ``raises-exception``. In one widget notebook a slider is moved
and the drawn figure must change; screenshots go to ``build/screenshots/``
(git-ignored).

``DATAKIT_BROWSER_NOTEBOOKS`` (a glob, default ``*.ipynb``) picks notebooks.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob(os.environ.get("DATAKIT_BROWSER_NOTEBOOKS",
                                                             "*.ipynb")))
SHOTS = ROOT / "build" / "screenshots"
CHROMIUM = next((p for p in (os.environ.get("DATAKIT_CHROMIUM"), "/usr/bin/chromium",
                             "/usr/bin/chromium-browser", shutil.which("chromium"))
                 if p and os.path.exists(p)), None)
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage"]
WIDGET_NOTEBOOK = "02_chaining.ipynb"  # its batch explorer's first slider is moved

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="no Chromium found (apt-get install chromium)"),
    pytest.mark.timeout(900),
]

# Read from JupyterLab's own notebook model: (cell index, ename, evalue) of every error output
# in a cell not tagged raises-exception; plus whether anything is still queued or running.
STATE_JS = """() => {
  const app = window.jupyterapp;
  const panel = app && app.shell.currentWidget;
  if (!panel || !panel.content || !panel.sessionContext) return null;
  const session = panel.sessionContext.session;
  const kernel = session && session.kernel;
  const errors = [];
  let busy = 0, unrun = 0;
  panel.content.widgets.forEach((cell, i) => {
    if (cell.model.type !== 'code') return;
    const tags = cell.model.getMetadata('tags') || [];
    const count = cell.model.executionCount;
    if (cell.promptNode && cell.promptNode.textContent.includes('*')) busy += 1;
    if (count === null) unrun += 1;
    for (const o of cell.model.outputs.toJSON()) {
      if (o.output_type === 'error' && !tags.includes('raises-exception'))
        errors.push([i, o.ename, String(o.evalue).slice(0, 300)]);
    }
  });
  return {kernel: kernel ? kernel.status : 'none', busy, unrun, errors,
          cells: panel.content.widgets.length};
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server over a temporary copy of notebooks/: yields its base URL and token."""
    work = tmp_path_factory.mktemp("lab")
    shutil.copytree(ROOT / "notebooks", work / "notebooks",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    for entry in ROOT.iterdir():  # data/, datakit/, ... so paths relative to a notebook hold
        if entry.name not in ("notebooks", ".git", ".venv", "build"):
            (work / entry.name).symlink_to(entry)
    port, token = _free_port(), uuid.uuid4().hex
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(work / ".jupyter"),
               JUPYTERLAB_WORKSPACES_DIR=str(work / ".workspaces"), PYDEVD_DISABLE_FILE_VALIDATION="1")
    env.pop("MPLBACKEND", None)
    log = open(work / "lab.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
         "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={work}",
         "--LabApp.expose_app_in_browser=True", f"--LabApp.workspaces_dir={work / '.workspaces'}",
         "--ServerApp.disable_check_xsrf=False"],
        cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 120
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=5)
                break
            except OSError:
                if proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError("JupyterLab did not start:\n"
                                       + (work / "lab.log").read_text()[-2000:]) from None
                time.sleep(0.5)
        yield url, token
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def _open(browser, lab, name):
    url, token = lab
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{url}/lab/tree/notebooks/{name}?reset&token={token}")
    page.wait_for_function(f"() => {{ const s = ({STATE_JS})(); "
                           "return s && s.kernel === 'idle'; }", timeout=120_000)
    return page


def _run_all(page, timeout: float) -> dict:
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    deadline = time.time() + timeout
    quiet = 0
    while time.time() < deadline:
        state = page.evaluate(STATE_JS)
        done = state["kernel"] == "idle" and state["busy"] == 0 and state["unrun"] == 0
        quiet = quiet + 1 if done else 0
        if quiet >= 3:  # idle on three polls in a row
            return state
        time.sleep(1.0)
    raise AssertionError(f"still running after {timeout:.0f} s: {page.evaluate(STATE_JS)}")


def _close(page):
    page.evaluate("() => window.jupyterapp.commands.execute('kernelmenu:shutdown')")
    page.close()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs_in_jupyterlab_without_errors(browser, lab, path):
    page = _open(browser, lab, path.name)
    try:
        state = _run_all(page, timeout=600)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{path.stem}.png"))
        assert state["errors"] == [], f"{path.name}: error outputs in JupyterLab"
    finally:
        _close(page)


def test_moving_a_slider_changes_the_figure(browser, lab):
    page = _open(browser, lab, WIDGET_NOTEBOOK)
    try:
        _run_all(page, timeout=600)
        box = page.locator(".jp-OutputArea-output .widget-vbox").first
        box.scroll_into_view_if_needed()
        figure = box.locator(".widget-output img").first
        figure.wait_for(timeout=60_000)
        SHOTS.mkdir(parents=True, exist_ok=True)
        before = box.screenshot(path=str(SHOTS / "slider_before.png"))
        src = figure.get_attribute("src")
        handle = box.locator(".widget-slider .noUi-handle").first
        handle.click()
        for _ in range(1):
            page.keyboard.press("ArrowRight")
        page.wait_for_function(
            "([el, old]) => { const img = el.querySelector('.widget-output img'); "
            "return img && img.getAttribute('src') !== old; }",
            arg=[box.element_handle(), src], timeout=60_000)
        time.sleep(0.5)
        after = box.screenshot(path=str(SHOTS / "slider_after.png"))
        assert before != after
    finally:
        _close(page)
