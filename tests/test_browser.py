"""The notebooks where learners open them: JupyterLab, in a real (headless) Chromium.

One JupyterLab server on a free loopback port, with a token, serves a
temporary copy of ``notebooks/`` (so running them never rewrites the stored
notebooks; the rest of the repository is linked in, so relative paths hold, but
``data/generated`` is a fresh folder, named to the kit by ``DATAKIT_DATA_DIR``).
Playwright drives the system's Chromium (Debian's ``chromium`` package;
``playwright install`` downloads are not used).

Every notebook is opened: its kernel must start (or join its tab's, below), its stored
outputs must be shown with no error output outside cells tagged ``raises-exception``, and
its first code cell (the imports: the kit, TensorFlow) must run in JupyterLab's kernel. In
the notebooks with widgets, every widget cell runs too (after the first code cell; each is
one self-contained call such as ``widgets.batch_explorer()``; wait until no cell is queued
or running and the kernel is idle, then read the outputs JupyterLab holds): a widget works
only through the browser, and nothing else checks it. In one of them a slider is moved and
the drawn figure must change (compared as screenshots); those, and a screenshot of each
notebook with a problem, go to ``build/screenshots/`` (git-ignored). Running the other
cells here would repeat what nbval does in the same ``make test`` with the same kernel
(running whole notebooks cost about 7 of the suite's 20 minutes);
``DATAKIT_BROWSER_RUN_ALL=1`` runs every notebook whole.

Each tab is one JupyterLab page that opens its notebooks one after another (JupyterLab
starts once per tab, not once per notebook). The notebooks whose setup cell leaves the
process as it found it share one kernel per tab, started by the first of them: the next
one's server session is created on that kernel, its working folder is set back to the
notebooks' own (a setup cell may ``os.chdir`` to a scratch folder), its namespace is
cleared (``%reset -f``) and its setup cell runs there, with TensorFlow already imported (a
kernel start and a TensorFlow import each cost seconds of a 2-core machine, 24 times over).
Widget notebooks share it too: their widgets talk to JupyterLab through that kernel's
comms, and the slider check below sees the figure redrawn. A notebook whose setup cell
changes the process for good (op determinism, mixed precision) is the shared kernel's last
user: it joins it the same way, and the kernel is shut down after it (these notebooks come
after the others, so each tab's shared kernel ends in one of them instead of the notebook
starting a kernel of its own). A notebook whose setup cell must run before TensorFlow's
runtime starts (logical devices, the Keras backend) gets a kernel of its own, as JupyterLab
starts it, shut down after it; so does the shared kernel's last user when its tab has no
shared kernel left.

``DATAKIT_BROWSER_NOTEBOOKS`` (a glob, default ``*.ipynb``) picks notebooks;
``DATAKIT_BROWSER_TABS`` (default 2) how many run at once, each in its own tab.
"""

from __future__ import annotations

import json
import os
import re
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
TABS = int(os.environ.get("DATAKIT_BROWSER_TABS", "2"))  # notebooks running at once
RUN_ALL = os.environ.get("DATAKIT_BROWSER_RUN_ALL") == "1"


def _has_widgets(path: Path) -> bool:
    """Widget notebooks run their widget cells (the browser is the widgets' only check)."""
    return path.name == WIDGET_NOTEBOOK or "widgets." in path.read_text()


#: What in a setup cell changes the kernel's process for good: a notebook whose setup cell
#: does one of these is the last user of the tab's shared kernel (shut down after it). An
#: ``os.chdir`` is not: the next notebook on the kernel starts in the notebooks' folder again.
CHANGES_THE_PROCESS = ("enable_op_determinism", "mixed_precision")
#: What in a setup cell must come before TensorFlow's runtime starts (or Keras is imported):
#: such a notebook gets a fresh kernel of its own (so does every notebook under
#: DATAKIT_BROWSER_RUN_ALL=1).
NEEDS_A_FRESH_PROCESS = ("set_logical_device_configuration", "set_visible_devices",
                         "KERAS_BACKEND")
SHARED, LAST, OWN = "shared", "last", "own"  # which kernel a notebook's setup cell runs in


def _kernel_for(path: Path) -> str:
    """``SHARED``: this notebook's setup cell may run in the tab's shared kernel; ``LAST``: it
    may too, but the kernel is shut down after it; ``OWN``: it needs a fresh kernel."""
    if RUN_ALL:
        return OWN
    cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"
             and "install-kit" not in c["metadata"].get("tags", [])]
    setup = "".join(cells[0]["source"]) if cells else ""
    if any(need in setup for need in NEEDS_A_FRESH_PROCESS):
        return OWN
    return LAST if any(change in setup for change in CHANGES_THE_PROCESS) else SHARED


PER_NOTEBOOK_S = 600
POLL_S, QUIET_POLLS = 0.5, 4  # a notebook is done once idle for 2 s
#: How often the page checks while a kernel starts: Playwright's default, every animation
#: frame, ran the notebook's state 60 times a second in each tab.
POLL_MS = 100

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="no Chromium found (apt-get install chromium)"),
    pytest.mark.skipif(not NOTEBOOKS, reason="no notebook matches DATAKIT_BROWSER_NOTEBOOKS"),
    # the whole run: a start-up allowance, then 30 s a notebook, 60 s more for its widgets, up
    # to 4 min for a notebook run whole (some take 2-4 min under nbval on a busy 2-core machine)
    pytest.mark.timeout(300 + (30 * len(NOTEBOOKS) + 60 * sum(map(_has_widgets, NOTEBOOKS))
                               + 240 * RUN_ALL * len(NOTEBOOKS)) // TABS),
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
  let busy = 0, unrun = 0, outputs = 0, firstCode = -1, installCode = -1, widgetsUnrun = 0;
  const widgetCells = [];
  panel.content.widgets.forEach((cell, i) => {
    if (cell.model.type !== 'code') return;
    const tags = cell.model.getMetadata('tags') || [];
    if (tags.includes('install-kit')) { if (installCode < 0) installCode = i; }
    else if (firstCode < 0) firstCode = i;  // the setup cell
    outputs += cell.model.outputs.length;
    const count = cell.model.executionCount;
    if (cell.promptNode && cell.promptNode.textContent.includes('*')) busy += 1;
    if (count === null) unrun += 1;
    if (cell.model.sharedModel.getSource().includes('widgets.')) {
      widgetCells.push(i);
      if (count === null) widgetsUnrun += 1;
    }
    for (let k = 0; k < cell.model.outputs.length; k++) {  // only errors turned to JSON
      const output = cell.model.outputs.get(k);
      if (output.type !== 'error' || tags.includes('raises-exception')) continue;
      const o = output.toJSON();
      errors.push([i, o.ename, String(o.evalue).slice(0, 300)]);
    }
  });
  return {kernel: kernel ? kernel.status : 'none', kernelId: kernel ? kernel.id : null, busy,
          unrun, errors, outputs, firstCode, installCode,
          firstCount: firstCode < 0 ? null : panel.content.widgets[firstCode].model.executionCount,
          cells: panel.content.widgets.length, widgetCells, widgetsUnrun};
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def lab_overrides() -> str:
    """The JupyterLab settings ``make lab`` writes into the venv (the Makefile's JSON line)."""
    found = re.search(r"'(\{\"@jupyterlab/docmanager-extension:plugin\".*\})'",
                      (ROOT / "Makefile").read_text())
    assert found, "the Makefile's lab target no longer writes JupyterLab's overrides"
    return found.group(1)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server over a temporary copy of notebooks/: yields its base URL, its token
    and its root folder."""
    work = tmp_path_factory.mktemp("lab")
    shutil.copytree(ROOT / "notebooks", work / "notebooks",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    for entry in ROOT.iterdir():  # datakit/, ... so paths relative to a notebook hold
        if entry.name not in ("notebooks", "data", ".git", ".venv", "build"):
            (work / entry.name).symlink_to(entry)
    # data/ with its shipped sets linked in but a fresh generated/: what the notebooks write
    # here never touches the repository's data/generated, which nbval's run of the same
    # notebooks may be using at the same time (`make test` runs tests in parallel).
    (work / "data" / "generated").mkdir(parents=True)
    for entry in (ROOT / "data").iterdir():
        if entry.name != "generated":
            (work / "data" / entry.name).symlink_to(entry)
    # `make lab`'s JupyterLab settings (Markdown opens rendered), as the Makefile writes them
    settings = work / ".lab-settings"
    settings.mkdir()
    (settings / "overrides.json").write_text(lab_overrides())
    port, token = _free_port(), uuid.uuid4().hex
    env = dict(os.environ, DATAKIT_DATA_DIR=str(work / "data"),
               JUPYTER_CONFIG_DIR=str(work / ".jupyter"),
               JUPYTERLAB_WORKSPACES_DIR=str(work / ".workspaces"),
               PYDEVD_DISABLE_FILE_VALIDATION="1")
    env.pop("MPLBACKEND", None)
    log = open(work / "lab.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
         "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={work}",
         "--LabApp.expose_app_in_browser=True", f"--LabApp.workspaces_dir={work / '.workspaces'}",
         "--ServerApp.disable_check_xsrf=False", f"--LabApp.app_settings_dir={settings}"],
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
        yield url, token, work
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


class Tab:
    """One JupyterLab page that opens notebooks one after another, and its shared kernel."""

    def __init__(self, browser, lab):
        self.lab, self.kernel_id = lab, None  # the shared kernel, once a notebook started it
        url, token, _ = lab
        self.page = browser.new_page(viewport={"width": 1400, "height": 1000})
        self.page.goto(f"{url}/lab?reset&token={token}")
        self.page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell",
                                    timeout=120_000)
        self.page.evaluate("async () => { await window.jupyterapp.restored; }")

    def open(self, path: Path, shared: bool) -> None:
        """Open ``path`` in this page; on the shared kernel when ``shared`` and one runs."""
        if shared and self.kernel_id:  # the notebook's server session, on the shared kernel
            url, token, _ = self.lab
            body = {"path": f"notebooks/{path.name}", "type": "notebook", "name": path.name,
                    "kernel": {"id": self.kernel_id}}
            request = urllib.request.Request(
                f"{url}/api/sessions", data=json.dumps(body).encode(), method="POST",
                headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=60) as answer:
                assert json.load(answer)["kernel"]["id"] == self.kernel_id
        self.page.evaluate("""async (path) => {
          await window.jupyterapp.commands.execute('docmanager:open',
                                                   {path, factory: 'Notebook'});
        }""", f"notebooks/{path.name}")
        self.page.wait_for_function(f"() => {{ const s = ({STATE_JS})(); "
                                    "return s && s.kernel === 'idle'; }", timeout=120_000,
                                    polling=POLL_MS)
        state = self.page.evaluate(STATE_JS)
        if shared and self.kernel_id:
            assert state["kernelId"] == self.kernel_id, "the notebook did not join the kernel"
            # the folder JupyterLab starts the notebook's kernel in, and a fresh namespace
            # (imported modules stay)
            home = json.dumps(str(self.lab[2] / "notebooks"))
            self.page.evaluate("""async (code) => {
              const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
              const done = await kernel.requestExecute({code, silent: true,
                                                        store_history: false}).done;
              if (done.content.status !== 'ok') throw new Error(JSON.stringify(done.content));
            }""", f"__import__('os').chdir({home})\n%reset -f")
        elif shared:
            self.kernel_id = state["kernelId"]

    def finish(self) -> None:
        """Close the page and shut the shared kernel down."""
        self.page.close()
        if self.kernel_id:
            url, token, _ = self.lab
            urllib.request.urlopen(urllib.request.Request(
                f"{url}/api/kernels/{self.kernel_id}", method="DELETE",
                headers={"Authorization": f"token {token}"}), timeout=60).close()

    def close(self, shared: bool) -> None:
        """Close the notebook; shut its kernel down unless it is the shared one (which is
        shut down too, and started again by the next notebook, when ``shared`` is False)."""
        if not shared and self.page.evaluate(STATE_JS)["kernelId"] == self.kernel_id:
            self.kernel_id = None
        self.page.evaluate("""async (shared) => {
          const panel = window.jupyterapp.shell.currentWidget;
          if (!shared) await panel.sessionContext.shutdown();
          panel.context.model.dirty = false;  // ran cells: no "save changes?" dialog
          panel.dispose();
        }""", shared)


def _start_run_all(page) -> None:
    """Clear every output and execution count, then start Run All (without waiting for it)."""
    page.evaluate("""async () => {
      const commands = window.jupyterapp.commands;
      await commands.execute('notebook:clear-all-cell-outputs');
      commands.execute('notebook:run-all-cells');
    }""")


def _start_first_code_cell(page) -> None:
    """Keep the stored outputs; run the install cell (which finds the kit and does nothing),
    then the setup cell, the first code cell after it (without waiting for them)."""
    page.evaluate(f"""async () => {{
      const state = ({STATE_JS})();
      const panel = window.jupyterapp.shell.currentWidget;
      const cells = [state.installCode, state.firstCode].filter(i => i >= 0);
      for (const i of cells) panel.content.widgets[i].model.executionCount = null;  // unrun
      for (const i of cells) {{
        panel.content.activeCellIndex = i;
        await window.jupyterapp.commands.execute('notebook:run-cell');
      }}
    }}""")


def _start_widget_cells(page) -> None:
    """Keep the stored outputs; run the install and setup cells, then each widget cell."""
    page.evaluate(f"""async () => {{
      const state = ({STATE_JS})();
      const panel = window.jupyterapp.shell.currentWidget;
      const cells = [state.installCode, state.firstCode, ...state.widgetCells]
        .filter(i => i >= 0);
      for (const i of cells) panel.content.widgets[i].model.executionCount = null;  // unrun
      for (const i of cells) {{
        panel.content.activeCellIndex = i;
        await window.jupyterapp.commands.execute('notebook:run-cell');
      }}
    }}""")


def _widgets_ran(page) -> dict | None:
    """The notebook's state once its first code cell and its widget cells have run."""
    state = _setup_ran(page)
    return state if state and (state["widgetsUnrun"] == 0 or state["errors"]) else None


def _setup_ran(page) -> dict | None:
    """The notebook's state once its setup cell (the first after the install cell) has run."""
    state = page.evaluate(STATE_JS)
    done = state and state["kernel"] == "idle" and state["busy"] == 0 and (
        state["firstCount"] is not None or state["errors"])
    return state if done else None


def _finished(page) -> dict | None:
    """The notebook's state once Run All is over (every cell ran, or an error stopped it)."""
    state = page.evaluate(STATE_JS)
    done = (state and state["kernel"] == "idle" and state["busy"] == 0
            and (state["unrun"] == 0 or state["errors"]))
    return state if done else None


def test_every_notebook_opens_and_runs_in_jupyterlab_without_errors(browser, lab):
    """Every notebook opened, its setup run (and its widget cells), TABS at a time."""
    order = {SHARED: 0, OWN: 1, LAST: 2}  # the shared kernels' last users come last
    queue = sorted(NOTEBOOKS, key=lambda path: order[_kernel_for(path)])
    problems, took = [], {}
    tabs = [Tab(browser, lab) for _ in range(min(TABS, len(NOTEBOOKS)))]
    running = {}  # tab index: (path, started, quiet polls, done, shared)
    SHOTS.mkdir(parents=True, exist_ok=True)
    while queue or running:
        for i, tab in enumerate(tabs):
            if i in running or not queue:
                continue
            path = queue.pop(0)
            kernel = _kernel_for(path)
            tab.open(path, kernel == SHARED or (kernel == LAST and tab.kernel_id is not None))
            shared = kernel == SHARED  # kept running after the notebook: SHARED only
            stored = tab.page.evaluate(STATE_JS)
            if stored["errors"]:
                problems.append(f"{path.name}: stored error outputs {stored['errors']}")
            if not stored["outputs"]:
                problems.append(f"{path.name}: JupyterLab shows none of its stored outputs")
            start, done = ((_start_run_all, _finished) if RUN_ALL else
                           (_start_widget_cells, _widgets_ran) if _has_widgets(path) else
                           (_start_first_code_cell, _setup_ran))
            start(tab.page)
            running[i] = (path, time.perf_counter(), 0, done, shared)
        time.sleep(POLL_S)
        for i, (path, started, quiet, done, shared) in list(running.items()):
            page = tabs[i].page
            state = done(page)
            quiet = quiet + 1 if state else 0  # idle for QUIET_POLLS polls in a row: done
            running[i] = (path, started, quiet, done, shared)
            if quiet < QUIET_POLLS and time.perf_counter() - started < PER_NOTEBOOK_S:
                continue
            del running[i]
            took[path.name] = round(time.perf_counter() - started)
            try:
                if state is None:
                    problems.append(f"{path.name}: still running after {PER_NOTEBOOK_S} s")
                elif state["errors"]:
                    problems.append(f"{path.name}: error outputs {state['errors']}")
                elif path.name == WIDGET_NOTEBOOK:  # it has run: move a slider
                    _slider_changes_the_figure(page)
            except Exception as e:  # report every notebook, then fail
                problems.append(f"{path.name}: {type(e).__name__}: {e}")
            try:  # what JupyterLab showed, for a notebook with a problem only (a screenshot
                # costs Chromium a full paint and a PNG, 24 times over)
                if any(p.startswith(f"{path.name}: ") for p in problems):
                    page.screenshot(path=str(SHOTS / f"{path.stem}.png"))
            except Exception as e:
                problems.append(f"{path.name}: its screenshot: {type(e).__name__}: {e}")
            finally:
                tabs[i].close(shared and state is not None)
    for tab in tabs:
        tab.finish()
    print("The first code cell (and the widget cells, or Run All) took (s):", took)
    assert problems == []


def _slider_changes_the_figure(page):
    """Move the first slider of the first widget; its figure (an <img>) must change."""
    box = page.locator(".jp-OutputArea-output .widget-vbox").first
    box.scroll_into_view_if_needed()
    figure = box.locator(".widget-output img").first
    figure.wait_for(timeout=60_000)
    before = box.screenshot(path=str(SHOTS / "slider_before.png"))
    src = figure.get_attribute("src")
    box.locator(".widget-slider .noUi-handle").first.click()
    page.keyboard.press("ArrowRight")
    page.wait_for_function(
        "([el, old]) => { const img = el.querySelector('.widget-output img'); "
        "return img && img.getAttribute('src') !== old; }",
        arg=[box.element_handle(), src], timeout=60_000)
    time.sleep(0.5)  # let the new image paint
    after = box.screenshot(path=str(SHOTS / "slider_after.png"))
    assert before != after, "moving the slider did not change the figure"


def test_make_lab_opens_on_the_start_page_rendered_with_both_editions(browser, lab):
    """`make lab` opens notebooks/START.md (its ``LabApp.default_url``), which its settings
    show rendered: a link to each route notebook in English and in Korean."""
    url, token, _ = lab
    assert "--LabApp.default_url=/lab/tree/START.md" in (ROOT / "Makefile").read_text()
    page = browser.new_page()
    try:
        # a fresh workspace, as a learner's first `make lab` has (this server's holds the
        # other test's last notebook, which JupyterLab would open again, with a kernel)
        page.goto(f"{url}/lab/tree/notebooks/START.md?reset&token={token}")
        # rendered, not the editor's text: JupyterLab resolves each link to the server's file
        page.wait_for_selector(".jp-RenderedMarkdown a[href*='/notebooks/ko/01_datasets.ipynb']",
                               timeout=120_000)
        links = " ".join(page.eval_on_selector_all(
            ".jp-RenderedMarkdown a", "els => els.map(e => e.getAttribute('href'))"))
        for name in ("01_datasets.ipynb", "10_your_own_videos.ipynb"):
            assert f"/notebooks/{name}" in links and f"/notebooks/ko/{name}" in links, links
    finally:
        page.close()
