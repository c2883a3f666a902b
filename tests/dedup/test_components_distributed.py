"""Connected components as partitioned star steps (run_components) agree with the in-memory
algorithm on graphs with long chains, stars, many small components, self-loops and repeated
edges; finished steps are reused after a crash."""

from __future__ import annotations

import numpy as np
import pytest
from curator.dedup import DeduplicationWorkflow
from curator_text.dedup import components
from curator_text.dedup.components import (
    connected_components,
    read_edges,
    run_components,
    scatter_edges,
    step_dir,
)


def _expected(a: np.ndarray, b: np.ndarray) -> dict[int, int]:
    nodes, roots = connected_components(a, b)
    return {int(n): int(r) for n, r in zip(nodes, roots, strict=True) if n != r}


def _distributed(tmp_path, a, b, parts: int, chunks: int = 3, executor=None) -> dict[int, int]:
    wf = DeduplicationWorkflow(str(tmp_path), str(tmp_path / "out"), executor=executor)
    work = str(tmp_path / "cc")
    for c, rows in enumerate(np.array_split(np.arange(len(a)), chunks)):
        scatter_edges(a[rows], b[rows], step_dir(work, 0), f"c{c}", parts)
    final = run_components(wf.run_stage, wf.partition_tasks, work, parts)
    found: dict[int, int] = {}
    for q in range(parts):
        lo, hi = read_edges(final, q, "hi")
        assert len(np.unique(hi)) == len(hi), "a node has more than one root"
        found.update(zip(hi.tolist(), lo.tolist(), strict=True))
    return found


def _keys(rng: np.random.Generator, n: int) -> np.ndarray:
    """n distinct keys shaped like document keys (file << 32 | row), in random order."""
    files, rows = rng.integers(0, 50, n), rng.integers(0, 2**31, n)
    keys = np.unique((files.astype(np.int64) << 32) | rows)
    return rng.permutation(keys)


def _graph(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    keys = _keys(rng, 3000)
    chain = keys[:120]                     # a path of 120 nodes in random key order
    a, b = [chain[:-1]], [chain[1:]]
    center = keys[120:121]                  # a star whose centre is not its smallest node
    leaves = keys[121:221]
    a.append(np.repeat(center, len(leaves)))
    b.append(leaves)
    small = keys[221:2221]                  # many small components: random pairs and triangles
    pairs = rng.integers(0, len(small), (700, 2))
    a.append(small[pairs[:, 0]])
    b.append(small[pairs[:, 1]])
    a, b = np.concatenate(a), np.concatenate(b)
    loops = keys[rng.integers(0, 2221, 50)]   # self-loops, and every 5th edge again reversed
    a, b = np.concatenate([a, loops, b[::5]]), np.concatenate([b, loops, a[::5]])
    order = rng.permutation(len(a))
    return a[order], b[order]


@pytest.mark.parametrize(("seed", "parts"), [(0, 4), (1, 1), (2, 7)])
def test_star_steps_equal_in_memory_components(tmp_path, seed, parts) -> None:
    a, b = _graph(seed)
    expected = _expected(a, b)
    assert max(np.unique(list(expected.values()), return_counts=True)[1]) >= 119
    assert _distributed(tmp_path, a, b, parts) == expected


def test_long_cycle_and_single_self_loop(tmp_path) -> None:
    rng = np.random.default_rng(5)
    ring = _keys(rng, 400)[:300]           # a cycle: diameter 150
    lone = ring[:1] + 1                    # a node with only a self-loop: a component alone
    a = np.concatenate([ring, lone])
    b = np.concatenate([np.roll(ring, 1), lone])
    found = _distributed(tmp_path, a, b, parts=3)
    assert found == _expected(a, b)
    assert len(found) == 299 and set(found.values()) == {int(ring.min())}


def test_empty_graph(tmp_path) -> None:
    empty = np.empty(0, np.int64)
    assert _distributed(tmp_path, empty, empty, parts=2) == {}


def test_resume_after_a_crash_reuses_finished_steps(tmp_path, monkeypatch) -> None:
    a, b = _graph(3)
    calls: list[str] = []
    real = components.large_star

    def failing(src: str, q: int):
        calls.append(src)
        if src.endswith("r002"):
            raise OSError("disk went away")
        return real(src, q)

    monkeypatch.setattr(components, "large_star", failing)
    with pytest.raises(RuntimeError, match="LargeStar"):
        _distributed(tmp_path, a, b, parts=3)
    assert any(c.endswith("r000") for c in calls) and any(c.endswith("r002") for c in calls)

    calls.clear()
    seen_small: list[str] = []
    real_small = components.small_star

    def counting_small(src: str, q: int):
        seen_small.append(src)
        return real_small(src, q)

    monkeypatch.setattr(components, "large_star", lambda src, q: (calls.append(src),
                                                                  real(src, q))[1])
    monkeypatch.setattr(components, "small_star", counting_small)
    assert _distributed(tmp_path, a, b, parts=3) == _expected(a, b)
    assert calls and not any(c.endswith("r000") for c in calls)   # step 0 reused
    assert not any(c.endswith("r001") for c in seen_small)         # step 1 reused


@pytest.mark.ray
def test_star_steps_on_ray(ray_cluster, tmp_path) -> None:
    from curator.executors.ray_data import RayDataExecutor

    rng = np.random.default_rng(9)
    keys = _keys(rng, 200)
    a = np.concatenate([keys[:60], keys[100:110]])           # a 61-node path and small pairs
    b = np.concatenate([keys[1:61], keys[110:120]])
    assert _distributed(tmp_path, a, b, parts=2, executor=RayDataExecutor()) == _expected(a, b)
