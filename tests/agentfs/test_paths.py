from pathlib import Path

import pytest

from agentfs.paths import LinkRefused, UnsafePath, confine, confine_file, open_regular


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    folder = tmp_path / "agent"
    (folder / "refs").mkdir(parents=True)
    (folder / "refs" / "a.md").write_text("x")
    (tmp_path / "secret.txt").write_text("secret")
    return folder


def test_relative_path_resolves_inside_the_folder(agent: Path) -> None:
    assert confine(agent, "refs/a.md") == (agent / "refs" / "a.md").resolve()


def test_missing_target_is_fine_because_nothing_is_read(agent: Path) -> None:
    assert confine(agent, "refs/not-there.md").name == "not-there.md"


@pytest.mark.parametrize(
    ("relative", "why"),
    [
        ("../secret.txt", "'..'"),
        ("refs/../../secret.txt", "'..'"),
        ("refs/..", "'..'"),
        ("/etc/passwd", "absolute"),
        ("C:/Windows/win.ini", "absolute"),
        ("refs\\..\\..\\secret.txt", "backslash"),
        ("refs/a.md\x00.png", "NUL"),
        ("", "empty"),
        ("   ", "empty"),
    ],
)
def test_escaping_paths_are_refused_with_the_reason(agent: Path, relative: str, why: str) -> None:
    with pytest.raises(UnsafePath, match=why):
        confine(agent, relative)


def test_symlink_leaving_the_folder_is_refused(agent: Path) -> None:
    (agent / "refs" / "evil.md").symlink_to(agent.parent / "secret.txt")
    (agent / "outside").symlink_to(agent.parent, target_is_directory=True)
    with pytest.raises(UnsafePath, match="link"):
        confine(agent, "refs/evil.md")
    with pytest.raises(UnsafePath, match="link"):
        confine(agent, "outside/secret.txt")


def test_symlink_staying_inside_the_folder_is_accepted(agent: Path) -> None:
    (agent / "refs" / "alias.md").symlink_to(agent / "refs" / "a.md")
    assert confine(agent, "refs/alias.md") == (agent / "refs" / "a.md").resolve()


def test_unsafe_path_is_a_value_error(agent: Path) -> None:
    with pytest.raises(ValueError):
        confine(agent, "../x")


def test_confine_file_keeps_a_linked_file_as_the_link(tmp_path: Path) -> None:
    """A file that is a link to another file of the folder is returned as the link (which the
    openers refuse), not as its target; a link that leaves is refused as by confine."""
    (tmp_path / "mmds").mkdir()
    (tmp_path / "state.json").write_text("{}")
    (tmp_path / "mmds" / "001-a.mmd").symlink_to("../state.json")
    (tmp_path / "mmds" / "002-out.mmd").symlink_to("/etc/hostname")
    assert confine(tmp_path, "mmds/001-a.mmd") == (tmp_path / "state.json").resolve()
    kept = confine_file(tmp_path, "mmds/001-a.mmd")
    assert kept == tmp_path.resolve() / "mmds" / "001-a.mmd" and kept.is_symlink()
    with pytest.raises(LinkRefused):
        open_regular(kept, folders=2)
    with pytest.raises(UnsafePath):
        confine_file(tmp_path, "mmds/002-out.mmd")
    assert confine_file(tmp_path, "state.json") == tmp_path.resolve() / "state.json"


def test_confine_file_refuses_a_folder_on_the_way_that_leaves(tmp_path: Path) -> None:
    """The folders of the path are resolved and confined: a folder linked out of the agent
    folder is refused before any file under it is named."""
    outside = tmp_path / "outside"
    outside.mkdir()
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "mmds").symlink_to(outside)
    with pytest.raises(UnsafePath) as refused:
        confine_file(agent, "mmds/001-a.mmd")
    assert refused.value.code == "path_leaves"
    (agent / "mmds").unlink()
    (agent / "real").mkdir()
    (agent / "mmds").symlink_to("real")
    assert confine_file(agent, "mmds/001-a.mmd") == agent.resolve() / "real" / "001-a.mmd"
