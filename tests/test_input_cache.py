"""service/input_cache.py as someone else would try it: a cache folder that holds other files,
one another user or a link owns, arrays planted under a group's name, a link at a temporary
name.  Nothing that is not the cache's own is emptied, overwritten or used; what is refused is
said, and the inputs are drawn instead, bit for bit what make_inputs draws."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from mmbench.core.axes import Configuration
from mmbench.measure.oracle import make_inputs, shared_inputs
from mmbench.service import input_cache


def conf(**kw) -> Configuration:
    base = dict(variant="naive_guarded", params={"TILE": 16}, dtype="float32", m=64, n=48, k=32,
                accumulate=False, memory="pinned", distribution="normal", seed=1)  # fmt: skip
    return Configuration(**(base | kw))


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    input_cache._refused_once.cache_clear()
    where = tmp_path / "cache"
    monkeypatch.setenv(input_cache.ENV, str(where))
    return where


def same_as_drawn(c: Configuration) -> bool:
    got, fresh = shared_inputs(c, input_cache), make_inputs(c)
    return all(x is None and y is None or x.tobytes() == y.tobytes()
               for x, y in zip(got, fresh, strict=True))  # fmt: skip


def test_a_named_folder_holding_other_files_is_neither_used_nor_emptied(cache, capsys):
    """MMBENCH_INPUTS_CACHE naming a folder of the user's own files: the run draws its inputs
    and the workflow's end (clear) leaves every one of those files (it deleted the folder)."""
    cache.mkdir()
    (cache / "thesis.tex").write_text("months of work")
    (cache / "notes").mkdir()
    (cache / "notes" / "a.npy").write_bytes(b"x")
    assert same_as_drawn(conf())
    assert "holds files that are not the inputs cache's" in capsys.readouterr().err
    input_cache.clear()
    assert (cache / "thesis.tex").read_text() == "months of work"
    assert (cache / "notes" / "a.npy").exists()
    assert sorted(p.name for p in cache.iterdir()) == ["notes", "thesis.tex"]


def test_clear_removes_the_caches_own_files_and_nothing_else(cache):
    """A cache this module made, in which the user later put a file of their own: clear
    removes the kept arrays, digests, locks and marker, and leaves the user's file."""
    assert same_as_drawn(conf())
    assert same_as_drawn(conf())  # the second time mapped from the cache
    kept = sorted(p.name for p in cache.iterdir())
    assert input_cache.MARK in kept and sum(n.endswith(".npy") for n in kept) == 2
    (cache / "mine.txt").write_text("keep me")
    input_cache.clear()
    assert [p.name for p in cache.iterdir()] == ["mine.txt"]


@pytest.mark.parametrize("how", ["writable by others", "symbolic link"])
def test_a_folder_others_can_write_or_a_link_is_refused(cache, tmp_path, capsys, how):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    if how == "symbolic link":
        os.symlink(elsewhere, cache)
    else:
        cache.mkdir()
        os.chmod(cache, 0o777)
    assert same_as_drawn(conf())
    err = capsys.readouterr().err
    assert f"inputs cache {cache} is" in err and "not used; inputs are drawn in each job" in err
    assert not list(elsewhere.iterdir()) and not [p for p in cache.iterdir()
                                                  if p.name.endswith(".npy")]  # fmt: skip
    input_cache.clear()
    assert elsewhere.is_dir()


@pytest.mark.skipif(os.getuid() != 0, reason="making a folder another user owns needs root")
def test_a_folder_another_user_made_first_is_not_used(cache, capsys):
    """Another local user makes the victim's cache folder first and plants arrays there under
    the group's name (all zeros): the run does not map them, says why, and draws its own."""
    c = conf()
    cache.mkdir(mode=0o755)
    for role, shape in (("a", (c.m, c.k)), ("b", (c.k, c.n))):
        np.save(cache / f"{input_cache.key(c)}.{role}.npy", np.zeros(shape, np.uint32))
    os.chown(cache, 65534, 65534)
    a, b, _ = shared_inputs(c, input_cache)
    assert a.std() > 0.5 and b.std() > 0.5  # normal inputs, not the planted zeros
    assert same_as_drawn(c)
    assert "is owned by uid 65534, not this user" in capsys.readouterr().err


def test_arrays_that_are_not_their_draw_are_drawn_again(cache, capsys):
    """A kept group whose array is overwritten with another of the same shape and type (its
    digest kept beside it no longer matches): the next job says so and draws it again."""
    c = conf()
    assert same_as_drawn(c)
    path = cache / f"{input_cache.key(c)}.a.npy"
    np.save(path, np.zeros((c.m, c.k), np.uint32))
    a, _, _ = shared_inputs(c, input_cache)
    assert a.tobytes() == make_inputs(c)[0].tobytes()
    assert (
        f"{path} is not what its group's draw was (digest); drawn again" in capsys.readouterr().err
    )
    digests = json.loads((cache / f"{input_cache.key(c)}.sha256").read_text())
    assert set(digests) == {"a", "b"}


def test_a_link_planted_at_a_temporary_name_is_not_followed(cache, tmp_path):
    """The writer's temporary files have names no one can guess, created exclusively: a link
    at the name the writer once used (.<file>.<pid>.tmp) points nowhere it writes."""
    c = conf()
    input_cache.usable()  # the folder, made and marked
    victim = tmp_path / "victim.txt"
    victim.write_text("the victim's own")
    for role in ("a", "b"):
        os.symlink(victim, cache / f".{input_cache.key(c)}.{role}.npy.{os.getpid()}.tmp")
    assert same_as_drawn(c) and same_as_drawn(c)
    assert victim.read_text() == "the victim's own"


def test_an_unmarked_private_folder_of_the_caches_own_files_is_taken(cache):
    """A folder of this user's alone (0700) holding only the cache's own file names, as an
    earlier version left it: taken as the cache (marked), its arrays still checked against
    their digests (none there: drawn again)."""
    c = conf()
    cache.mkdir(mode=0o700)
    np.save(cache / f"{input_cache.key(c)}.a.npy", np.zeros((c.m, c.k), np.uint32))
    assert same_as_drawn(c)
    assert (cache / input_cache.MARK).is_file()
    assert (cache / f"{input_cache.key(c)}.sha256").is_file()
