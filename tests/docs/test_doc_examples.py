"""Every example of README.md and docs/*.md that shows its output runs here, and prints what it shows.

The examples run as written, read out of the markdown, with the real CLI, a real `corrige serve`
(what `make serve` starts) and the real `openai` client, on the bundled model. Normalisations,
the only differences allowed between what a page shows and what the example prints:

* the server: `http://127.0.0.1:8000` and `localhost:8000` become the test server's address
  (a free port), and `corrige serve` gets `--host`/`--port`; `corrige bench load` gets `--url`;
  the trace store is the test server's (`CORRIGE_TRACE_STORE`), not the reader's own;
* trailing spaces at the end of a printed line (rich pads table cells);
* JSON shown with `…`: a string ending in `…` is a prefix of what comes back, a list whose last
  element is `…` may go on; `timings_ms` values are timings (any number, same stages) and
  `request_id` is any id of the same form;
* the `overloaded` message names the server's `max_waiting` (256 by default), which the test
  server sets low to get there.

`EXAMPLES` says, for every fenced block of those pages, which test runs it, or why none does.
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import re
import shlex
import sqlite3
import subprocess
import sys
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import pytest
from doc_support import DOCS, REPO, Block, block_with, blocks

sys.path.insert(0, str(REPO / "tests" / "e2e"))
from e2e_support import ServerProcess  # noqa: E402

from corrige.server.settings import Settings  # noqa: E402

README = REPO / "README.md"
DOC = REPO / "docs"
API = DOC / "api.md"
BIN = Path(sys.executable).parent  # where this interpreter's `corrige` is
SERVE = ["-m", "corrige.cli", "serve"]  # `corrige serve`, as `make serve` runs it

RUN = "run"  # the block runs in the test named with it
NO_OUTPUT = "no output shown"  # commands, layouts, diagrams, config: nothing to compare
NOT_RUN = "not run"

# (page, text in the block) → (what the tests do with it, which test or why)
EXAMPLES: dict[tuple[str, str], tuple[str, str]] = {
    ("README.md", "make serve PORT=8001"): (RUN, "test_readme_shell.py"),
    ("README.md", "source .venv/bin/activate"): (RUN, "test_readme_shell.py"),
    ("README.md", "curl -s http://127.0.0.1:8000/v1/grammar/correct"): (RUN, "test_readme_curl_and_its_json"),
    ("README.md", '"sentence": "Yesterday I goed to the store",'): (RUN, "test_readme_curl_and_its_json"),
    ("README.md", '$ corrige correct "Yesterday I goed'): (RUN, "test_readme_corrige_correct"),
    ("README.md", "from openai import OpenAI"): (RUN, "test_readme_openai_client"),
    ("api.md", "import language_tool_python"): (RUN, "test_api_languagetool_client"),
    ("api.md", 'json={"text": text}'): (RUN, "test_api_whole_text"),
    ("api.md", "prompt = [1, 496, 614"): (RUN, "test_api_raw_completions"),
    ("api.md", "def score(text):"): (RUN, "test_api_scoring"),
    ("api.md", '"code": "overloaded"'): (RUN, "test_api_error_shape"),
    ("ARCHITECTURE.md", "tokenizer.py        byte-level BPE"): (NO_OUTPUT, "the layout"),
    ("tutor.md", "corrige eval --card "): (NO_OUTPUT, "commands, figures in the model card"),
    ("tutor.md", "corrige eval gold.m2"): (NO_OUTPUT, "commands, figures in the table after them"),
    ("tutor.md", "corrige corpus build /work/corpus-raw --out corpus/v2"): (
        NOT_RUN,
        "building the corpus and training take hours; the figures are in the reader model's card",
    ),
    ("observability.md", "corrige traces audit           #"): (NO_OUTPUT, "commands; their output below them"),
    ("BENCHMARKS.md", "corrige bench load --requests 200"): (RUN, "test_serving_lab_load_test_is_not_rate_limited"),
    ("BENCHMARKS.md", "bench model --output model.json"): (NOT_RUN, "a benchmark: 31 s and a model.json"),
    ("BENCHMARKS.md", "--batches 1,4,16"): (NOT_RUN, "benchmarks that write docs/bench"),
    ("BENCHMARKS.md", "corrige eval --model corrige/models/tutor --card"): (NOT_RUN, "rewrites the model cards"),
    ("BENCHMARKS.md", "corrige bench engine --model"): (NOT_RUN, "a benchmark: 80 s"),
    ("BENCHMARKS.md", "corrige bench sweep --output docs/bench/sweep-reader.json"): (NOT_RUN, "a benchmark: 81 s"),
    ("BENCHMARKS.md", "corrige bench speculative"): (NOT_RUN, "a benchmark: 80 s"),
    ("BENCHMARKS.md", "corrige bench scoring"): (NOT_RUN, "a benchmark: about 3 minutes"),
    ("BENCHMARKS.md", "corrige bench http --model corrige/models/seed --requests 300"): (
        NOT_RUN,
        "a benchmark: 300 requests a side",
    ),
    ("BENCHMARKS.md", "corrige bench text --model corrige/models/seed --requests 200"): (
        NOT_RUN,
        "a benchmark: 200 requests of each",
    ),
    ("BENCHMARKS.md", "corrige bench load --url"): (NO_OUTPUT, "an outline of three commands (`...`)"),
    ("BENCHMARKS.md", "--dod-clients 0"): (NOT_RUN, "benchmarks: 166 s and more"),
    ("BENCHMARKS.md", "corrige bench observability --model corrige/models/seed --rounds 48"): (
        NOT_RUN,
        "a benchmark: about 7 minutes",
    ),
    ("BENCHMARKS.md", "corrige bench soak --model corrige/models/seed --minutes 5"): (
        NOT_RUN,
        "a soak: about 6 minutes",
    ),
    ("BENCHMARKS.md", "corrige bench fuzz --model corrige/models/seed --minutes 10"): (
        NOT_RUN,
        "a fuzz run: 10 minutes",
    ),
    ("corpus.md", "tatoeba-manythings/{fra,deu,jpn,nld}-eng.zip"): (NO_OUTPUT, "a folder layout"),
    ("rescoring.md", "corrige lm build /work/corpus/v2/sentences.txt"): (
        NOT_RUN,
        "reads the corpus and JFLEG, kept outside the repository; tests/cli/test_lm_cli.py runs each command",
    ),
    ("rescoring.md", "corrige eval test.src --reference test.ref0"): (
        NOT_RUN,
        "public learner sets fetched at evaluation time, never in the repository",
    ),
    ("corpus.md", "corrige corpus build /work/corpus-raw"): (
        NOT_RUN,
        "reads 190 MB of source files kept outside the repository",
    ),
    ("observability.md", "$ corrige budget --profile reference"): (NO_OUTPUT, "commands"),
    ("observability.md", 'default_profile = "tutor"'): (NO_OUTPUT, "a budget file's format"),
    ("observability.md", "^t_total = t_parse"): (NO_OUTPUT, "a formula"),
    ("observability.md", "HTTP + schema + guards           1.00   400"): (
        NOT_RUN,
        "measured: 400 corrections on a busy machine; tests/obs checks the report's terms",
    ),
    ("observability.md", "$ corrige traces report --json"): (NO_OUTPUT, "commands"),
    ("observability.md", "prometheus --config.file"): (NOT_RUN, "needs Prometheus and Grafana"),
    ("observability.md", "corrige bench traces --traces 10000"): (NOT_RUN, "a benchmark"),
    ("portal.md", "make serve    # then open"): (NOT_RUN, "`make serve` runs until stopped"),
    ("portal.md", "$ corrige bench portal"): (NOT_RUN, "a benchmark: 600 timed requests, figures of one machine"),
    ("portal.md", "pytest -q tests/web"): (NOT_RUN, "the browser tests, part of the suite"),
    ("portal.md", "pip install -e '.[postgres]'"): (
        NOT_RUN,
        "needs a PostgreSQL server; tests/web runs the store, `corrige serve --database-url` and the bench on one",
    ),
    ("scaling.md", "CORRIGE_DATABASE_URL=postgresql://corrige:secret@db.internal/corrige corrige serve"): (
        NOT_RUN,
        "needs a PostgreSQL server; tests/web runs `corrige serve` on a real one",
    ),
    ("BENCHMARKS.md", "corrige bench portal --model corrige/models/seed --rounds 200 --warmup 40 --database"): (
        NOT_RUN,
        "a benchmark: two servers, 1,200 timed requests, a PostgreSQL server",
    ),
    ("retrieval.md", "learner sentence + edits + categories"): (NO_OUTPUT, "a diagram"),
    ("ARCHITECTURE.md", "client ──HTTP──► SERVER PROCESS"): (
        NO_OUTPUT,
        "a diagram; tests/docs/test_architecture_doc.py checks the names in it",
    ),
    ("retrieval.md", "retriever = Retriever.load()"): (RUN, "test_retrieval_snippet_returns_what_it_says"),
    ("retrieval.md", 'corrige rules search "casado con"'): (NO_OUTPUT, "commands"),
    ("retrieval.md", "corrige eval-retrieval --n-test 50 --edits"): (
        NOT_RUN,
        "an evaluation: corrects three sets (JFLEG dev is fetched, never committed); figures in the table after it",
    ),
    ("scaling.md", "corrige serve --replicas 2                     # 2 replicas"): (
        NOT_RUN,
        "servers that run until stopped; tests/cluster/test_ray_serve_e2e.py runs `--replicas 2`",
    ),
    ("scaling.md", "kubectl apply -f deploy/k8s/"): (NOT_RUN, "needs a Kubernetes cluster; tests/cluster checks them"),
    ("BENCHMARKS.md", "corrige bench replicas"): (NOT_RUN, "a benchmark: Ray, two replicas, about 6 minutes"),
    ("BENCHMARKS.md", "python -m corrige.bench.proxy_cost"): (NOT_RUN, "a benchmark: Ray, one server, 3 minutes"),
    ("BENCHMARKS.md", "corrige bench limits --json"): (NOT_RUN, "a benchmark: a throwaway PostgreSQL, about 50 s"),
    ("BENCHMARKS.md", "corrige bench compare --baseline"): (NOT_RUN, "a benchmark: two servers, 2 minutes"),
    ("scaling.md", "corrige bench limits"): (NOT_RUN, "a benchmark: a throwaway PostgreSQL, about 50 s"),
    ("scaling.md", "python -m corrige.bench.proxy_cost"): (NOT_RUN, "a benchmark: Ray, one server, 3 minutes"),
    ("tracing.md", "http.request                      root"): (NO_OUTPUT, "the span tree"),
    ("tracing.md", "TRACEPARENT= corrige tool rules"): (RUN, "test_tracing_orphan_example"),
}


def page_blocks() -> list[Block]:
    return [block for path in DOCS for block in blocks(path)]


def entries_of(block: Block) -> list[tuple[str, str]]:
    """The keys whose text is in the block (`^text`: the block starts with it)."""

    def has(needle: str) -> bool:
        return block.text.startswith(needle[1:]) if needle.startswith("^") else needle in block.text

    return [key for key in EXAMPLES if block.path.name == key[0] and has(key[1])]


def test_every_example_is_run_or_says_why_not():
    unlisted = [f"{b.where}: {b.lines()[0] if b.lines() else ''}" for b in page_blocks() if len(entries_of(b)) != 1]
    assert not unlisted, (
        "blocks with no entry (or several) in EXAMPLES of tests/docs/test_doc_examples.py: give each one, "
        "and a test when the block shows output:\n" + ("\n".join(unlisted))
    )
    used = {key for b in page_blocks() for key in entries_of(b)}
    assert set(EXAMPLES) == used, f"entries that match no block: {sorted(set(EXAMPLES) - used)}"
    tests = {name for kind, name in EXAMPLES.values() if kind == RUN and name.startswith("test_") and "." not in name}
    assert tests <= set(globals()), f"no such test here: {sorted(tests - set(globals()))}"


# ----------------------------------------------------------------------------------------- helpers


def clean_env(**extra: str) -> dict[str, str]:
    """The test's environment without CORRIGE_* settings, this interpreter's `corrige` first on the PATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CORRIGE_")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return {**env, **extra}


def at(text: str, url: str) -> str:
    """The page's server address replaced by the test server's."""
    return text.replace("http://127.0.0.1:8000", url).replace("localhost:8000", url.removeprefix("http://"))


def shell(script: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-c", script], cwd=REPO, env=clean_env(**env), capture_output=True, text=True, timeout=300
    )


def printed_lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines()]


@contextmanager
def serving(folder: Path, *options: str, **env: str):
    """`corrige serve OPTIONS` on a free port, its trace store, portal database and log in `folder`; stopped after."""
    files = {"CORRIGE_TRACE_STORE": str(folder / "traces.sqlite"), "CORRIGE_PORTAL_DB": str(folder / "portal.sqlite")}
    server = ServerProcess([*SERVE, *options], {**files, **env}, folder / "server.log")
    server.store = folder / "traces.sqlite"
    with ExitStack() as stop:
        stop.callback(server.stop)  # even when it never got ready
        yield server.start()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """`corrige serve` with its defaults: what `make serve` runs."""
    if not (BIN / "corrige").exists():
        pytest.skip(f"no corrige command beside {sys.executable}")
    with serving(tmp_path_factory.mktemp("docs-server")) as server:
        yield server


# ----------------------------------------------------------------------------------------- README


def test_readme_corrige_correct():
    block = block_with(README, '$ corrige correct "Yesterday I goed')
    command, *shown = block.lines()
    run = shell(command.removeprefix("$ "))
    assert run.returncode == 0, run.stderr
    assert printed_lines(run.stdout) == printed_lines("\n".join(shown)), f"{block.where} prints:\n{run.stdout}"


MORE = "…more"  # a list shown with `…` as its last element


def shown_json(text: str):
    """The page's JSON, with `…` as a list's last element read as "and more"."""
    text = re.sub(r",\s*…\s*\]", lambda _: f', "{MORE}"]', text)
    return json.loads(text)


def matches(shown, got, key: str = "") -> list[str]:
    """Where `got` differs from what the page shows (the normalisations in the module docstring)."""
    if key == "request_id":
        return [] if re.fullmatch(r"[0-9a-f]{32}", got) and re.fullmatch(r"[0-9a-f]*…?", shown) else [key]
    if key == "timings_ms":
        same = set(shown) == set(got) and all(isinstance(v, float | int) for v in got.values())
        return [] if same else [f"timings_ms: {sorted(shown)} vs {sorted(got)}"]
    if isinstance(shown, dict):
        if not isinstance(got, dict) or set(shown) != set(got):
            return [f"{key}: keys {sorted(shown)} vs {sorted(got) if isinstance(got, dict) else got!r}"]
        return [d for k in shown for d in matches(shown[k], got[k], k)]
    if isinstance(shown, list):
        more = bool(shown) and shown[-1] == MORE
        items = shown[:-1] if more else shown
        if not isinstance(got, list) or (len(got) < len(items) if more else len(got) != len(items)):
            return [f"{key}: {len(items)} items{' or more' if more else ''} vs {got!r}"]
        return [d for s, g in zip(items, got, strict=False) for d in matches(s, g, key)]
    if isinstance(shown, str) and shown.endswith("…"):
        return [] if isinstance(got, str) and got.startswith(shown[:-1]) else [f"{key}: {got!r} vs {shown!r}"]
    return [] if shown == got and type(shown) is type(got) else [f"{key}: {got!r} vs {shown!r}"]


def test_the_json_comparison_can_fail():
    shown = shown_json('{"a": [1, …], "b": "ab…", "request_id": "5f0c…"}')
    assert matches(shown, {"a": [1, 2], "b": "abc", "request_id": "0" * 32}) == []
    assert matches(shown, {"a": [2], "b": "abc", "request_id": "0" * 32})
    assert matches(shown, {"a": [1], "b": "xbc", "request_id": "0" * 32})
    assert matches(shown, {"a": [1], "b": "abc", "request_id": "x"})
    assert matches(shown, {"a": [1], "b": "abc", "request_id": "0" * 32, "c": 1})


def test_readme_curl_and_its_json(served):
    command = block_with(README, "curl -s http://127.0.0.1:8000/v1/grammar/correct")
    answer = block_with(README, '"sentence": "Yesterday I goed to the store",')
    assert answer.line > command.line and answer.lang == "json"
    run = shell(at(command.text, served.url))
    assert run.returncode == 0, run.stderr
    differences = matches(shown_json(answer.text), json.loads(run.stdout))
    assert not differences, f"{answer.where} differs from what {command.where} prints: {differences}\n{run.stdout}"


def print_comments(block: Block) -> str:
    """What a snippet's `print(...)` lines say they print: the string literal ending each one's comment."""
    out = []
    for line in block.lines():
        if "print(" in line and "#" in line:
            literal = re.search(r'("(?:[^"\\]|\\.)*")\s*$', line.split("#", 1)[1])
            assert literal, f"{block.where}: {line.strip()!r} shows no output"
            out.append(ast.literal_eval(literal[1]) + ("" if 'end=""' in line else "\n"))
    assert out, f"{block.where}: no print shows its output"
    return "".join(out)


def run_snippet(block: Block, url: str, folder: Path) -> None:
    """Run a Python snippet of the page against the test server: it prints what its comments say."""
    script = folder / "snippet.py"
    script.write_text(at(block.text, url), encoding="utf-8")
    run = subprocess.run(
        [sys.executable, str(script)], env=clean_env(), capture_output=True, text=True, timeout=120, cwd=folder
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == print_comments(block), f"{block.where} prints {run.stdout!r}"


def test_readme_openai_client(served, tmp_path):
    run_snippet(block_with(README, "from openai import OpenAI"), served.url, tmp_path)


# ----------------------------------------------------------------------------------------- docs/api.md


def test_api_raw_completions(served, tmp_path):
    run_snippet(block_with(API, "prompt = [1, 496, 614"), served.url, tmp_path)


def test_api_scoring(served, tmp_path):
    run_snippet(block_with(API, "def score(text):"), served.url, tmp_path)


def test_api_languagetool_client(served, tmp_path):
    run_snippet(block_with(API, "import language_tool_python"), served.url, tmp_path)


def test_api_whole_text(served, tmp_path):
    run_snippet(block_with(API, 'json={"text": text}'), served.url, tmp_path)


def test_api_error_shape(tmp_path):
    """`overloaded` from a server that queues at most 4 (the page's server: 256, the default)."""
    block = block_with(API, '"code": "overloaded"')
    shown = json.loads(block.text.replace("…", ""))["error"]
    default = Settings.model_fields["max_waiting"].default
    assert shown["message"].startswith(f"{default} requests")
    one_at_a_time = {"CORRIGE_BATCHING": "none", "CORRIGE_N_SLOTS": "1", "CORRIGE_MAX_BATCH": "1"}

    async def burst(url: str):
        async with httpx.AsyncClient(base_url=url, timeout=60, limits=httpx.Limits(max_connections=30)) as client:
            sentences = (f"I goed home {i} times." for i in range(24))
            return await asyncio.gather(*(client.post("/v1/grammar/correct", json={"sentence": s}) for s in sentences))

    with serving(
        tmp_path, "--rate-limit", "0", "--max-waiting", "4", CORRIGE_DEBUG_STEP_DELAY_MS="20", **one_at_a_time
    ) as server:
        refused = [r.json() for r in asyncio.run(burst(server.url)) if r.status_code == 503]
    assert refused, "no request was refused: the test server did not fill its queue"
    error = refused[0]["error"]
    assert set(error) == set(shown) and error["code"] == shown["code"]
    assert error["message"].replace("4 requests", f"{default} requests", 1) == shown["message"]
    assert not matches(shown["request_id"], error["request_id"], "request_id")


@pytest.mark.slow  # 200 requests
def test_serving_lab_load_test_is_not_rate_limited(tmp_path):
    """docs/BENCHMARKS.md's serving lab, two lines: its server, then the load; no request may meet a rate limit."""
    block = block_with(DOC / "BENCHMARKS.md", "corrige bench load --requests 200")
    serve_line, load_line = [line.split("#")[0].strip() for line in block.lines() if line.strip()]
    serve_args = shlex.split(serve_line)
    assert serve_args[:2] == ["corrige", "serve"], serve_line
    with serving(tmp_path, *serve_args[2:]) as server:
        run = shell(f"{load_line} --url {server.url}")
    assert run.returncode == 0, run.stdout + run.stderr
    requests = int(re.search(r"--requests (\d+)", load_line)[1])
    assert f"{requests}/{requests} ok" in run.stdout, run.stdout
    assert "errors: none" in run.stdout and "rate limited" not in run.stdout


# ----------------------------------------------------------------------------------------- other docs/


def test_tracing_orphan_example(served):
    """docs/tracing.md: a tool call through the server is not an orphan; one run by hand is (exit 1)."""
    block = block_with(DOC / "tracing.md", "TRACEPARENT= corrige tool rules")
    curl, by_hand, audit = [at(line, served.url) for line in block.lines()]
    env = {"CORRIGE_TRACE_STORE": str(served.store)}
    first = shell(curl, **env)
    assert first.returncode == 0 and json.loads(first.stdout)["rules"], first.stdout + first.stderr
    wait_for_span(served.store, "tool.call")  # the server's side of the call is written, so the tool span has a parent
    assert shell(by_hand, **env).returncode == 0
    run = shell(audit, **env)
    shown = audit.split("#", 1)[1].strip()  # "1 orphan span … (exit 1)"
    count, exit_code = re.fullmatch(r"(\d+ orphan span)\S* … \(exit (\d+)\)", shown).groups()
    assert run.returncode == int(exit_code), run.stdout + run.stderr
    assert run.stdout.startswith(count + " "), run.stdout  # "1 orphan span out of …", not "spans"


def wait_for_span(store: Path, name: str, timeout: float = 20.0) -> None:
    give_up = time.monotonic() + timeout
    while time.monotonic() < give_up:
        if store.exists():
            with sqlite3.connect(store) as db:
                try:
                    if db.execute("SELECT 1 FROM spans WHERE name = ? LIMIT 1", (name,)).fetchone():
                        return
                except sqlite3.OperationalError:  # not created yet
                    pass
        time.sleep(0.1)
    raise AssertionError(f"no {name} span in {store} after {timeout} s")


def shown_keys(text: str) -> dict[str, object]:
    """`{a, b (a note), c {x, y}}` or `a, b` → {"a": None, "b": None, "c": {"x": None, "y": None}}."""
    text = re.sub(r"\([^)]*\)", "", text).strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    out: dict[str, object] = {}
    for name, inner in re.findall(r"([\w.]+)\s*(?:\{([^}]*)\})?", text):
        out[name] = shown_keys(inner) if inner else None
    return out


def keys_of(value) -> dict[str, object]:
    return {k: keys_of(v) if isinstance(v, dict) else None for k, v in value.items()}


def test_retrieval_snippet_returns_what_it_says():
    """docs/retrieval.md: each expression's comment names the keys of what it returns."""
    from corrige.tutor.agent import Tutor

    block = block_with(DOC / "retrieval.md", "retriever = Retriever.load()")
    sentence = "I am married with Laura."
    namespace = {"sentence": sentence, "correction": Tutor.load().correct(sentence)}
    lines = block.lines()
    checked = 0
    for statement in ast.parse(block.text).body:
        code = compile(ast.Module([statement], []), block.where, "exec")
        if not isinstance(statement, ast.Expr):
            exec(code, namespace)
            continue
        value = eval(compile(ast.Expression(statement.value), block.where, "eval"), namespace)
        comment = [lines[statement.end_lineno - 1].split("#", 1)[1]]
        for line in lines[statement.end_lineno :]:  # a comment that goes on over the next lines
            if not line.strip().startswith("#"):
                break
            comment.append(line.split("#", 1)[1])
        shown = shown_keys(" ".join(comment))
        for item in value if isinstance(value, list) else [value]:
            assert keys_of(item) == shown, f"{block.where}: {ast.unparse(statement)} returns {keys_of(item)}"
        assert value, f"{block.where}: {ast.unparse(statement)} returned nothing to check"
        checked += 1
    assert checked == 2
