"""Open every page of the built site in headless Chromium, as a reader would, and check it.

Usage: ``python docs/_tools/browser_check.py [--site build/site] [--screenshots DIR]``
(``make docs-check`` builds the site first). The site is served on a loopback port; Chromium is
driven over the Chrome DevTools Protocol (``websocket-client``). For every page:

* it loads with no console error, no uncaught exception and no failed request (HTTP >= 400);
* every internal link and image resolves (the file exists; a ``#fragment`` names an element of
  the target page);
* where the page has mathematics, KaTeX typeset every formula (a ``.katex`` element per
  ``.arithmatex`` one) and none failed (no ``.katex-error``); ``MATH_PAGES`` must have some;

* no build hook's marker is left raw (``<!-- sia-theory help -->``) and no section (``h1`` /
  ``h2``) is empty;

and the site search returns a hit for ``ScaleInvariant``. Screenshots of the home page, one API
page and one tutorial go into the screenshots folder. Prints the counts (pages, links, images)
and exits 1 on any failure, listing them; exits 2 with one line if chromium cannot be started
(it must print its DevTools address within ``--start-timeout`` seconds, 60 by default).
Needs Debian's ``chromium`` package.
"""

from __future__ import annotations

import argparse
import base64
import functools
import http.server
import json
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

SCREENSHOTS = {"home.png": "index.html", "api.png": "api/sia_theory.transforms.html",
               "tutorial.png": "tutorials/own_rule.html"}
# API pages whose docstrings hold :math: formulas (the griffe extension makes them arithmatex)
MATH_PAGES = ("api/sia_theory.transforms.html", "api/sia_theory.zoo.members.html")
SEARCH_TERM = "ScaleInvariant"
START_SECONDS = 60  # for chromium to print its DevTools address
RAW_MARKER = re.compile(r"<!--\s*sia-theory\b[^>]*-->")  # a build hook's marker left in a page


class _Ids(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for key, value in attrs:
            if key in ("id", "name") and value:
                self.ids.add(value)


class _Sections(HTMLParser):
    """The ``h1``/``h2`` headings of a page's article and whether anything stands between each
    and the next heading of its level or above (text, a deeper heading, or an image, table,
    figure, code block). An API member's heading (class ``doc-heading``) counts as content."""

    CONTENT = {"img", "table", "pre", "svg", "figure", "iframe", "video", "h3", "h4", "h5", "h6"}

    def __init__(self):
        super().__init__()
        self.sections: list[list] = []  # [level, heading text, has content]
        self.heading: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag in ("h1", "h2") and "doc-heading" in (dict(attrs).get("class") or ""):
            tag = "h3"  # an API member's heading (mkdocstrings): content of its page
        if tag in ("h1", "h2"):
            level = int(tag[1])
            if self.sections and self.sections[-1][0] < level:
                self.sections[-1][2] = True  # a subsection
            self.heading = []
            self.sections.append([level, "", False])
        elif tag in self.CONTENT and self.sections and self.heading is None:
            self.sections[-1][2] = True

    def handle_endtag(self, tag):
        if tag in ("h1", "h2") and self.heading is not None:
            self.sections[-1][1] = " ".join("".join(self.heading).replace("¶", "").split())
            self.heading = None

    def handle_data(self, data):
        if self.heading is not None:
            self.heading.append(data)
        elif data.strip() and self.sections:
            self.sections[-1][2] = True


def page_problems(html: str) -> list[str]:
    """What a reader would see as broken in a built page's HTML: a build hook's marker left raw
    (``<!-- sia-theory ... -->``: the hook did not replace it) and a section (``h1``/``h2``)
    with nothing before the next one or the end of the article."""
    found = [f"raw build marker {m[0]!r} (a hook did not fill it)"
             for m in RAW_MARKER.finditer(html)]
    start, end = html.find("<article"), html.rfind("</article>")
    parser = _Sections()
    parser.feed(html[start:end] if 0 <= start < end else html)
    found += [f"empty section {title!r}" for _, title, filled in parser.sections if not filled]
    return found


class BrowserError(RuntimeError):
    """Chromium did not start or could not be driven (one line, for the report)."""


def _pump(stream, lines: queue.Queue) -> None:
    """Put each line of ``stream`` into ``lines``, then ``None`` at its end (a reader thread:
    the main thread waits on the queue with a deadline, never on chromium's output)."""
    for line in stream:
        lines.put(line)
    lines.put(None)


def devtools_url(lines: queue.Queue, proc, seconds: float) -> str:
    """The DevTools address chromium prints on stderr, waited for at most ``seconds``;
    :class:`BrowserError` if it exits first or prints none in time."""
    deadline, tail = time.monotonic() + seconds, []
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=min(left, 0.5))
        except queue.Empty:
            continue
        if line is None:  # stderr closed: chromium exited
            try:
                status = proc.wait(min(5, max(left, 0.1)))
            except subprocess.TimeoutExpired:
                status = "unknown"
            last = f"; it printed: {tail[-1]}" if tail else ""
            raise BrowserError(f"chromium exited (status {status}) before printing its DevTools "
                               f"address{last}")
        match = re.search(r"DevTools listening on (ws://\S+)", line)
        if match:
            return match[1]
        if line.strip():
            tail.append(" ".join(line.split())[:200])
    raise BrowserError(f"chromium printed no DevTools address within {seconds:g} s")


class Browser:
    """A headless Chromium and one page, over the DevTools websocket."""

    def __init__(self, executable: str, start_seconds: float = START_SECONDS):
        import websocket  # the docs extra

        self.ws = None
        self.profile = tempfile.mkdtemp(prefix="sia-docs-chromium-")
        try:
            self.proc = subprocess.Popen(
                [executable, "--headless=new", "--remote-debugging-port=0",
                 f"--user-data-dir={self.profile}", "--no-first-run",
                 "--no-default-browser-check", "--disable-gpu", "--disable-extensions",
                 "--no-sandbox", "--hide-scrollbars", "--window-size=1280,900", "about:blank"],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        except OSError as err:
            shutil.rmtree(self.profile, ignore_errors=True)
            raise BrowserError(f"chromium could not be run: {err}") from None
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=_pump, args=(self.proc.stderr, lines), daemon=True).start()
        try:  # the reader thread keeps draining stderr afterwards
            url = devtools_url(lines, self.proc, start_seconds)
            self.ws = websocket.create_connection(url, timeout=60, suppress_origin=True)
        except Exception as err:
            self.close()
            if isinstance(err, BrowserError):
                raise
            raise BrowserError(f"chromium's DevTools socket: {type(err).__name__}: "
                               f"{err}") from None
        self.next_id, self.events = 0, []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget",
                                 {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 900,
                                                         "deviceScaleFactor": 1,
                                                         "mobile": False}, session=True)

    def call(self, method, params=None, session=False, timeout=60):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        self.ws.send(json.dumps(message))
        deadline = time.time() + timeout
        while time.time() < deadline:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)
        raise TimeoutError(method)

    def wait_event(self, method, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for i, event in enumerate(self.events):
                if event.get("method") == method:
                    return self.events.pop(i)
            self.ws.settimeout(max(0.1, deadline - time.time()))
            try:
                self.events.append(json.loads(self.ws.recv()))
            except Exception:  # noqa: BLE001 - a websocket timeout: look again until the deadline
                pass
        raise TimeoutError(method)

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True}, session=True)
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"].get("text", "evaluation failed"))
        return result["result"].get("value")

    def open(self, url):
        self.events.clear()
        self.call("Page.navigate", {"url": url}, session=True)
        self.wait_event("Page.loadEventFired")
        # let document$ subscribers (KaTeX) and late requests run
        self.evaluate("new Promise(r => setTimeout(r, 300))")

    def problems(self):
        """Console errors, exceptions and failed requests seen since the last ``open``."""
        found = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                found.append("exception: " + params["exceptionDetails"].get("text", ""))
            elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
                found.append("console.error: " + " ".join(
                    str(a.get("value", a.get("description", ""))) for a in params["args"]))
            elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
                found.append(f"log: {params['entry']['text']} {params['entry'].get('url', '')}")
            elif method == "Network.responseReceived" and params["response"]["status"] >= 400:
                found.append(f"HTTP {params['response']['status']}: {params['response']['url']}")
            elif method == "Network.loadingFailed" and not params.get("canceled"):
                found.append(f"request failed: {params.get('errorText')}")
        return found

    def screenshot(self, path: Path):
        data = self.call("Page.captureScreenshot", {"format": "png"}, session=True)["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self):
        try:
            if self.ws is not None:
                self.ws.close()
        except Exception:  # noqa: BLE001
            pass
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


def serve(site: Path):
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


LINKS_JS = """(() => ({
  links: [...document.querySelectorAll('a[href]')].map(a => a.href),
  images: [...document.querySelectorAll('img[src]')].map(i => i.src),
  math: document.querySelectorAll('.arithmatex').length,
  katex: document.querySelectorAll('.arithmatex .katex').length,
  katexErrors: document.querySelectorAll('.katex-error').length,
}))()"""

SEARCH_JS = """(async () => {
  const input = document.querySelector('input.md-search__input');
  if (!input) return -1;
  input.focus();
  input.value = %s;
  for (const type of ['focus', 'input', 'keyup'])
    input.dispatchEvent(new Event(type, {bubbles: true}));
  for (let i = 0; i < 200; i++) {
    const hits = document.querySelectorAll('.md-search-result__item').length;
    if (hits > 0) return hits;
    await new Promise(r => setTimeout(r, 100));
  }
  return 0;
})()"""


def check(site: Path, screenshots: Path | None, start_seconds: float = START_SECONDS) -> int:
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        print("docs-check: chromium not found; install Debian's chromium package "
              "(apt-get install chromium)", file=sys.stderr)
        return 1
    try:
        import websocket  # noqa: F401
    except ImportError:
        print("docs-check: websocket-client missing; install the docs extra "
              "(pip install -e '.[docs]')", file=sys.stderr)
        return 1
    if screenshots is not None:
        for name in SCREENSHOTS:  # never report a stale screenshot of an earlier run
            (screenshots / name).unlink(missing_ok=True)
    if not (site / "index.html").exists():
        print(f"docs-check: no site at {site}; run make docs first", file=sys.stderr)
        return 1
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html")
                   if p.name != "404.html")
    failures = [f"{page}: {problem}" for page in pages
                for problem in page_problems((site / page).read_text(errors="replace"))]
    try:
        browser = Browser(executable, start_seconds)
    except BrowserError as err:
        print(f"docs-check: {err}", file=sys.stderr)
        return 2
    server, base = serve(site)
    links: set[str] = set()
    images: set[str] = set()
    math_pages = 0
    started = time.perf_counter()
    try:
        for page in pages:
            browser.open(base + page)
            failures += [f"{page}: {p}" for p in browser.problems()]
            found = browser.evaluate(LINKS_JS)
            if page in MATH_PAGES and not found["math"]:
                failures.append(f"{page}: no typeset formula (its docstrings have :math:)")
            if found["math"]:
                math_pages += 1
                if found["katex"] < found["math"] or found["katexErrors"]:
                    failures.append(f"{page}: math not rendered ({found['katex']} of "
                                    f"{found['math']} formulas, {found['katexErrors']} errors)")
            links |= {u for u in found["links"] if u.startswith(base)}
            images |= {u for u in found["images"] if u.startswith(base)}
            if screenshots is not None:
                for name, target in SCREENSHOTS.items():
                    if page == target:
                        screenshots.mkdir(parents=True, exist_ok=True)
                        browser.screenshot(screenshots / name)
        browser.open(base + "index.html")
        hits = browser.evaluate(SEARCH_JS % json.dumps(SEARCH_TERM))
        if not hits or hits < 1:
            failures.append(f"search: no result for {SEARCH_TERM!r} ({hits})")
    finally:
        browser.close()
        server.shutdown()
    ids: dict[Path, set[str]] = {}
    for url in sorted(links | images):
        parts = urlsplit(url)
        path = site / unquote(parts.path.lstrip("/"))
        if parts.path.endswith("/"):
            path = path / "index.html"
        if not path.is_file():
            failures.append(f"broken {'image' if url in images else 'link'}: {url[len(base):]}")
            continue
        if parts.fragment and path.suffix == ".html":
            if path not in ids:
                parser = _Ids()
                parser.feed(path.read_text(errors="replace"))
                ids[path] = parser.ids
            if unquote(parts.fragment) not in ids[path]:
                failures.append(f"broken anchor: {url[len(base):]}")
    seconds = time.perf_counter() - started
    print(f"docs-check: {len(pages)} pages, {len(links)} internal links, {len(images)} images, "
          f"{math_pages} pages with math, search hits for {SEARCH_TERM!r}: {hits}; "
          f"{seconds:.0f} s")
    if screenshots is not None:
        taken = [str(screenshots / n) for n in SCREENSHOTS if (screenshots / n).exists()]
        print(f"screenshots: {', '.join(taken) or 'none'}")
    if failures:
        print(f"{len(failures)} problems:", *failures[:200], sep="\n  ")
        return 1
    print("docs-check: OK")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=Path("build/site"))
    parser.add_argument("--screenshots", type=Path, default=Path("build/docs-screenshots"))
    parser.add_argument("--start-timeout", type=float, default=START_SECONDS,
                        help="seconds for chromium to start (default %(default)s)")
    args = parser.parse_args(argv)
    if not args.start_timeout > 0:
        parser.error(f"--start-timeout must be a number of seconds > 0, got "
                     f"{args.start_timeout}")
    return check(args.site.resolve(), args.screenshots, args.start_timeout)


if __name__ == "__main__":
    sys.exit(main())
