"""The docs stay references that hold: the option reference is what its generator writes
now, every relative link leads to a file, and no page names a folder of the machine
the figures were measured on."""

import importlib.util
import re
from pathlib import Path

import pytest
from conftest import REPO

PAGES = sorted([REPO / "README.md", *REPO.glob("docs/**/*.md"), *REPO.glob("studies/**/*.md")])
REFERENCES = sorted([REPO / "README.md", *REPO.glob("docs/**/*.md")])
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
MACHINE_FOLDERS = ("/work/", "/root/", "../shared")


def relative_links(page: Path) -> list[str]:
    """The targets of ``page``'s Markdown links and images that are paths (no URL, no bare
    anchor), outside code blocks, without their ``#anchor``."""
    text = FENCE.sub("", page.read_text())
    targets = [match.group(1) for match in LINK.finditer(text)]
    return [target.split("#")[0] for target in targets if not re.match(r"[a-z]+:|#", target)]


def test_the_command_reference_is_what_its_script_writes() -> None:
    """The same words in the same order; the lines may wrap elsewhere (click's version)."""
    spec = importlib.util.spec_from_file_location("command_reference", REPO / "scripts/command_reference.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    page = (REPO / "docs/commands.md").read_text()
    assert script.same_text(page, script.reference()), (
        "docs/commands.md is out of date: run python scripts/command_reference.py"
    )


def test_the_reference_lists_every_command() -> None:
    """A section per command of ``w2v --help``, train's options in full."""
    page = (REPO / "docs/commands.md").read_text()
    for name in ("train", "similar", "analogy", "eval", "vocab", "phrases", "classes", "score", "word2vec"):
        assert f"\n## w2v {name}\n" in page
    assert "  --checkpoint DIR" in page and "Usage: w2v train [OPTIONS]" in page


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_every_relative_link_leads_to_a_file(page: Path) -> None:
    broken = [target for target in relative_links(page) if not (page.parent / target).exists()]
    assert not broken, f"{page.relative_to(REPO)}: links to nothing: {', '.join(broken)}"


@pytest.mark.parametrize("page", REFERENCES, ids=lambda page: str(page.relative_to(REPO)))
def test_no_page_names_a_folder_of_the_machine(page: Path) -> None:
    text = page.read_text()
    named = [folder for folder in MACHINE_FOLDERS if folder in text]
    assert not named, f"{page.relative_to(REPO)} names {', '.join(named)}: name files a reader has"


def test_the_links_are_found() -> None:
    """Links and images, with and without anchors; URLs, anchors and code are left out."""
    page = REPO / "docs/vectors.md"
    assert "../w2v/data/README.md" in relative_links(page) and "img/map.png" in relative_links(page)
    assert not any(target.startswith(("http", "#")) or not target for target in relative_links(REPO / "README.md"))
