"""The documentation: every example in docs/ runs, and the site builds with every reference.

Examples run in a scratch folder that links the repository's tests/, schemas/ and
benchmarks/, so commands read the same files a reader of a clone has and write nowhere in
the tree. The blocks of one page run in order and share that folder, as a reader following
the page would; each Python block runs in an interpreter of its own. Pages are read as
mkdocs renders them, with their snippet includes pasted in (line numbers count the result).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import referencing
import yaml
from _doc_examples import KNOWN_MARKS, RUNNABLE, Block, blocks, console_steps, matches

from kernelindex_sdk import self_contained_schema
from kernelindex_sdk._base.schemas import load_schemas, published_schemas
from kernelindex_sdk._cli import _parser
from kernelindex_sdk.validation import _semantic

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
HOOKS = DOCS / "hooks"
PAGES = sorted(p for p in DOCS.rglob("*.md") if HOOKS not in p.parents)
SNIPPET = re.compile(r'^--8<-- "(?P<path>[^":]+)(?::(?P<section>\w+))?"$', re.MULTILINE)


def _include(match: re.Match[str]) -> str:
    """One snippet include: the whole file, or the named section between its markers."""
    text = (ROOT / match["path"]).read_text("utf-8")
    if match["section"] is None:
        return text
    start = text.index(f"--8<-- [start:{match['section']}]")
    end = text.index(f"--8<-- [end:{match['section']}]")
    return text[text.index("\n", start) + 1 : text.rindex("\n", 0, end) + 1]


def _source(page: Path) -> str:
    """The page as mkdocs renders it: pymdownx.snippets includes pasted in."""
    return SNIPPET.sub(_include, page.read_text("utf-8"))


ALL_BLOCKS = [block for page in PAGES for block in blocks(_source(page), page)]
SHELLS = {"sh", "bash"}
EXAMPLE = ROOT / "tests" / "fixtures" / "liger-jsd-forward-torch-b200.json"
# The modules the API reference documents, and the page of each.
API_PAGES = {
    "kernelindex_sdk": "kernelindex_sdk",
    "kernelindex_sdk.models": "models",
    "kernelindex_sdk.digest": "digest",
    "kernelindex_sdk.declared_digests": "declared-digests",
    "kernelindex_sdk.importers.liger": "importers-liger",
    "kernelindex_sdk.importers.nvbench": "importers-nvbench",
    "kernelindex_sdk.importers.gbench": "importers-gbench",
    "kernelindex_sdk.importers.pytest_benchmark": "importers-pytest-benchmark",
    "kernelindex_sdk.importers.tritonbench": "importers-tritonbench",
    "kernelindex_sdk.exporters": "exporters",
    "kernelindex_sdk.reference_kernels.harness": "harness",
    "kernelindex_sdk.reference_kernels.jsd": "jsd",
    "kernelindex_sdk.reference_kernels.launch": "launch",
    "kernelindex_sdk.reference_kernels.workers": "workers",
    "kernelindex_sdk.merge": "merge",
    "kernelindex_sdk.sharding": "sharding",
    "kernelindex_sdk.compare": "compare",
    "kernelindex_sdk.report": "report",
    "kernelindex_sdk.store": "store",
    "kernelindex_sdk.store.history": "store-history",
    "kernelindex_sdk.verdict": "verdict",
    "kernelindex_sdk.provenance": "provenance",
    "kernelindex_sdk.conditions": "conditions",
    "kernelindex_sdk.site": "site",
}

sys.path.insert(0, str(HOOKS))
import checks_reference  # noqa: E402
import cli_reference  # noqa: E402
import schema_reference  # noqa: E402

# -- running the examples ------------------------------------------------------------------


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scratch folder that sees the repository's example files, with the CLI on PATH."""
    for name in ("tests", "schemas", "benchmarks"):
        (tmp_path / name).symlink_to(ROOT / name)
    monkeypatch.chdir(tmp_path)
    bin_dir = str(Path(sys.executable).parent)
    monkeypatch.setenv("PATH", bin_dir + os.pathsep + os.environ.get("PATH", ""))
    monkeypatch.setenv("NO_COLOR", "1")
    return tmp_path


def _bash(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", command],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _run(block: Block, cwd: Path) -> None:
    if block.language in {"python", "py"}:
        # Each block in a fresh interpreter, as a reader would paste it: no state leaks
        # between blocks or from other tests (an imported kernel, an environment variable).
        script = cwd / f"_{block.path.stem}_{block.line}.py"
        script.write_text(block.code, "utf-8")
        done = _bash(f"{shlex.quote(sys.executable)} {script.name}", cwd)
        assert done.returncode == 0, f"{block.where}: exit {done.returncode}\n{done.stderr}"
    elif block.language in SHELLS:
        done = _bash(block.code, cwd)
        assert done.returncode == 0, f"{block.where}: exit {done.returncode}\n{done.stderr}"
    elif block.language == "console":
        for step in console_steps(block.code):
            done = _bash(f"{step.command} 2>&1", cwd)
            assert done.returncode == 0, f"{block.where}: {step.command}\n{done.stdout}"
            assert matches(step.expected, done.stdout), (
                f"{block.where}: {step.command}\nshown:\n"
                + "\n".join(step.expected)
                + f"\nprinted:\n{done.stdout}"
            )


def _page_params() -> list[Any]:
    """One case per page (its unmarked blocks), one per GPU block (marked gpu)."""
    params = []
    for page in PAGES:
        runnable = [b for b in ALL_BLOCKS if b.path == page and b.language in RUNNABLE]
        if any(b.mark is None for b in runnable):
            params.append(pytest.param(page, None, id=page.relative_to(DOCS).as_posix()))
        params.extend(
            pytest.param(page, b.line, id=b.where, marks=pytest.mark.gpu)
            for b in runnable
            if b.mark == "gpu"
        )
    return params


@pytest.mark.parametrize(("page", "gpu_line"), _page_params())
def test_page_examples_run(page: Path, gpu_line: int | None, workspace: Path) -> None:
    """Each page's unmarked examples run in order; a GPU example runs alone, on a GPU."""
    ran = 0
    for block in ALL_BLOCKS:
        if block.path != page or block.language not in RUNNABLE:
            continue
        if (gpu_line is None and block.mark is None) or block.line == gpu_line:
            _run(block, workspace)
            ran += 1
    assert ran


def test_every_runnable_block_is_run_or_marked() -> None:
    """No runnable block escapes: unmarked ones run on their page, marks are known ones."""
    for block in ALL_BLOCKS:
        assert block.mark is None or block.mark in KNOWN_MARKS, f"{block.where}: {block.mark!r}"
        if block.mark is not None:
            assert block.language in RUNNABLE, (
                f"{block.where}: a mark on a {block.language!r} block"
            )
        if block.language in RUNNABLE and block.mark != "install":
            # Running an install would change the environment the tests run in.
            assert "pip install" not in block.code, f"{block.where}: mark it docs-test: install"
    assert sum(b.language in RUNNABLE and b.mark is None for b in ALL_BLOCKS) >= 20


def test_published_form_recipe_passes_every_vector(workspace: Path) -> None:
    """The Python writer on the page for other languages, run as written, passes all vectors."""
    page = DOCS / "format-other-languages.md"
    [block] = [
        b
        for b in ALL_BLOCKS
        if b.path == page and b.language == "python" and "vectors/published.json" in b.code
    ]
    vectors = json.loads((ROOT / "tests" / "vectors" / "published.json").read_text("utf-8"))
    script = workspace / "recipe.py"
    script.write_text(block.code, "utf-8")
    done = _bash(f"{shlex.quote(sys.executable)} recipe.py", workspace)
    assert done.returncode == 0, done.stderr
    assert len(vectors) >= 31
    assert done.stdout == f"{len(vectors)} of {len(vectors)} published-form vectors pass\n"


def test_install_blocks_name_existing_extras() -> None:
    """Install commands are not run; the extras they name are the ones pyproject defines."""
    extras = set(metadata.metadata("kernelindex-sdk").get_all("Provides-Extra") or ())
    checked = 0
    for block in ALL_BLOCKS:
        if block.mark != "install":
            continue
        for requirement in re.findall(r"(?:kernelindex-sdk|\.)\[([a-z,]+)\]", block.code):
            assert set(requirement.split(",")) <= extras, f"{block.where}: [{requirement}]"
            checked += 1
    assert checked


def test_yaml_examples_use_real_hooks_and_options() -> None:
    """pre-commit configs name hooks we ship; workflow steps pass options the CLI has."""
    hook_ids = {
        hook["id"] for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text("utf-8"))
    }
    parser = _parser()
    hooks = commands = 0
    for block in ALL_BLOCKS:
        if block.language not in {"yaml", "yml"}:
            continue
        doc = yaml.safe_load(block.code)
        for repo in doc.get("repos", []):
            for hook in repo["hooks"]:
                assert hook["id"] in hook_ids, f"{block.where}: unknown hook {hook['id']!r}"
                hooks += 1
        for job in doc.get("jobs", {}).values():
            for step in job["steps"]:
                if step.get("run", "").startswith("kernelindex "):
                    parser.parse_args(shlex.split(step["run"])[1:])
                    commands += 1
    assert hooks
    assert commands


# -- the extractor itself ------------------------------------------------------------------


def test_blocks_reads_languages_marks_and_lines() -> None:
    text = (
        "# t\n\n<!-- docs-test: gpu -->\n```sh\nkernelindex bench jsd\n```\n\n"
        "- item\n\n    ```python\n    x = 1\n    ```\n"
    )
    found = blocks(text, Path("page.md"))
    assert [(b.language, b.mark, b.line, b.code) for b in found] == [
        ("sh", "gpu", 4, "kernelindex bench jsd\n"),
        ("python", None, 10, "x = 1\n"),
    ]


def test_console_steps_join_continuations_and_keep_output() -> None:
    steps = console_steps("$ echo a \\\n  b\na b\n$ true\n")
    assert [(s.command, s.expected) for s in steps] == [("echo a b", ("a b",)), ("true", ())]


def test_console_output_must_match_what_the_page_shows() -> None:
    assert matches(("a", "...", "z"), "a\nb\nc\nz\n")
    assert matches(("a", "..."), "a\n")
    assert not matches(("a", "z"), "a\nb\nz\n")
    assert not matches((), "unexpected\n")


def test_console_output_before_a_command_is_an_error() -> None:
    with pytest.raises(ValueError, match="before the first"):
        console_steps("orphan\n$ true\n")


# -- the generators ------------------------------------------------------------------------


def test_schema_page_shows_defaults_unknown_keywords_and_ref_links() -> None:
    """Keywords the renderer has no words for are shown as JSON, never dropped."""
    schemas = {
        "x.json": {
            "$id": "https://example.com/x.json",
            "title": "X",
            "type": "object",
            "required": ["a"],
            "properties": {
                "a": {"type": "integer", "default": 3, "description": "A | b.", "x-unit": "ns"},
                "b": {"$ref": "#/$defs/B"},
                "m": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 5}},
                "e": {"type": "string", "examples": ["z"], "allOf": [{"minLength": 1}]},
            },
            "$defs": {"B": {"description": "The B.", "type": "string", "enum": ["p", "q"]}},
        }
    }
    page = schema_reference.render_page("x.json", schemas)
    row = (
        "| `a` | `integer` | yes | A \\| b.<br>**Default:** `3`"
        '<br>**Constraints:** `x-unit`: `"ns"` |'
    )
    assert row in page
    assert "| `b` | [B](#b) |  | The B. |" in page
    assert (
        "| `m` | map of string to `string` |  | **Constraints:** values: at most 5 characters |"
        in page
    )
    assert '**Constraints:** `examples`: `["z"]`; `allOf`: `[{"minLength": 1}]` |' in page
    assert "## B { #b }" in page
    assert 'one of `"p"`, `"q"`' in page


def test_schema_links_reject_refs_they_cannot_place() -> None:
    with pytest.raises(ValueError, match="cannot link"):
        schema_reference.render_page(
            "x.json", {"x.json": {"$id": "x", "properties": {"a": {"$ref": "#/items"}}}}
        )


def test_cli_page_refuses_an_exit_status_without_a_meaning() -> None:
    with pytest.raises(ValueError, match="EXIT_TIMEOUT"):
        cli_reference.render_page(_parser(), {"EXIT_OK": 0, "EXIT_TIMEOUT": 3})


def test_checks_page_refuses_a_check_without_a_docstring() -> None:
    def check_nothing(view: object) -> list[object]:
        return []

    with pytest.raises(ValueError, match="check_nothing"):
        checks_reference.render_page([check_nothing], _semantic.DIGEST_CHECK)


def test_site_lists_every_semantic_check(site: Path) -> None:
    html = _page(site, "reference/checks")
    for check in (*_semantic.CHECKS, _semantic.DIGEST_CHECK):
        assert f"<code>{check.__name__}</code>" in html, check.__name__


def test_cli_walk_finds_new_subcommands() -> None:
    parser = argparse.ArgumentParser(prog="kernelindex")
    sub = parser.add_subparsers()
    outer = sub.add_parser("outer", help="outer help").add_subparsers()
    inner = outer.add_parser("inner", help="inner help")
    inner.add_argument("--depth", type=int, default=7, help="how deep")
    page = cli_reference.render_page(parser, {"EXIT_OK": 0})
    assert [words for words, _, _ in cli_reference.commands(parser)] == [
        (),
        ("outer",),
        ("outer", "inner"),
    ]
    assert "## `kernelindex outer inner` { #kernelindex-outer-inner }" in page
    assert "| `--depth` | `DEPTH` |  | `7` |  | how deep |" in page


# -- the built site ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site as `mkdocs build --strict` makes it (about two seconds)."""
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return out


def _page(site: Path, path: str) -> str:
    return (site / path / "index.html").read_text("utf-8")


def _properties(node: Any) -> set[str]:
    """Every property name defined anywhere in a schema."""
    found: set[str] = set()
    if isinstance(node, dict):
        found |= set(node.get("properties", {}))
        for value in node.values():
            found |= _properties(value)
    elif isinstance(node, list):
        for value in node:
            found |= _properties(value)
    return found


@pytest.mark.parametrize("schema_file", sorted(load_schemas()))
def test_site_shows_every_schema_property_and_definition(site: Path, schema_file: str) -> None:
    schema = load_schemas()[schema_file]
    html = _page(site, f"reference/schemas/{schema_file.removesuffix('.json')}")
    for name in _properties(schema):
        assert re.search(rf"<code>(?:[\w.]+\.)?{re.escape(name)}</code>", html), name
    for name in schema.get("$defs", {}):
        assert f'id="{name.lower()}"' in html, name
    # The download is the file as packaged: self-contained.
    downloaded = (site / "schemas" / "v1alpha1" / schema_file).read_text("utf-8")
    assert downloaded == published_schemas()[schema_file]


def _subcommands(
    parser: argparse.ArgumentParser, words: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    found = [(words, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _subcommands(sub, (*words, name))
    return found


def test_site_shows_every_cli_command_and_option(site: Path) -> None:
    html = _page(site, "reference/cli")
    commands = _subcommands(_parser())
    assert len(commands) >= 7
    for words, parser in commands:
        assert f'id="{"-".join(("kernelindex", *words))}"' in html, words
        for action in parser._actions:
            for option in action.option_strings:
                if option not in {"-h", "--help"}:
                    assert f"<code>{option}</code>" in html, (words, option)


@pytest.mark.parametrize("module", sorted(API_PAGES))
def test_site_documents_every_public_name(site: Path, module: str) -> None:
    html = _page(site, f"reference/api/{API_PAGES[module]}")
    public = __import__(module, fromlist=["__all__"]).__all__
    for name in public:
        assert f'id="{module}.{name}"' in html, name


def test_self_contained_schema_validates_without_network(site: Path) -> None:
    """The downloadable schema embeds every file: validation resolves no outside $ref."""
    schema = json.loads((site / "schemas" / "kernelindex-v1alpha1.json").read_text("utf-8"))
    # The download is the library's, as `kernelindex schema RecordBundle` prints it.
    assert schema == self_contained_schema("RecordBundle")

    def refuse(uri: str) -> referencing.Resource[Any]:
        raise AssertionError(f"tried to fetch {uri}")

    validator = jsonschema.Draft202012Validator(
        schema, registry=referencing.Registry(retrieve=refuse)
    )
    example = json.loads(EXAMPLE.read_text("utf-8"))
    assert list(validator.iter_errors(example)) == []
    example["run"]["spec"]["timing"]["latencyNs"]["median"] = -5
    assert [e.validator for e in validator.iter_errors(example)] == ["minimum"]


def test_every_page_is_in_the_navigation(site: Path) -> None:
    """Every written and every generated page is linked from the navigation."""
    import generate  # the mkdocs hook: needs mkdocs, like the build itself

    nav = set(re.findall(r'href="([^"#]*)"', _page(site, "")))
    written = [page.relative_to(DOCS).as_posix() for page in PAGES]
    pages = written + [path for path in generate.generated_pages() if path.endswith(".md")]
    assert len(pages) >= 20
    for path in pages:
        stem = path.removesuffix(".md")
        assert ("." if stem == "index" else f"{stem}/") in nav, path


def test_ci_builds_the_site_strictly() -> None:
    """CI's one entry builds the site with --strict, after the tests, as a visible step."""
    lines = (ROOT / ".ci" / "run").read_text("utf-8").splitlines()
    build = [i for i, line in enumerate(lines) if "mkdocs build --strict" in line]
    tests = [i for i, line in enumerate(lines) if "-m pytest" in line]
    assert build
    assert tests
    assert lines[build[0]].startswith('echo "== mkdocs build --strict"; ')
    assert build[0] > tests[0]


def test_not_found_page_links_work_from_any_depth(site: Path) -> None:
    """The 404 page is served for any missing path: its links are absolute (site_url)."""
    config = yaml.safe_load(
        "\n".join(
            line
            for line in (ROOT / "mkdocs.yml").read_text("utf-8").splitlines()
            if line.startswith("site_url:")
        )
    )
    prefix = re.sub(r"^https?://[^/]+", "", config["site_url"])
    assert prefix.startswith("/")
    assert prefix.endswith("/")
    html = (site / "404.html").read_text("utf-8")
    links = re.findall(r'(?:href|src)="([^"#]+)"', html)
    local = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert len(local) >= 5
    for link in local:
        assert link.startswith(prefix), link
        assert (site / link.removeprefix(prefix).split("?")[0]).exists(), link
