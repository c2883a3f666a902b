"""Executors' typed configs (curator.executors.config): one dataclass per executor, values
converted by the project's one converter, unknown keys warned about (NeMo's handling), and the
docs' key tables generated from the dataclasses."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from curator.errors import ConfigError
from curator.executors.config import (
    CONFIG_CLASSES,
    ActorPoolConfig,
    LocalConfig,
    RayDataConfig,
    XennaConfig,
    config_table_markdown,
    config_tables_in,
)

ROOT = Path(__file__).resolve().parents[3]
EXECUTORS = ROOT / "packages/core/src/curator/executors"


def _executors():
    from curator.executors.local import LocalExecutor
    from curator.executors.ray_actor_pool import RayActorPoolExecutor
    from curator.executors.ray_data import RayDataExecutor
    from curator.executors.xenna import XennaExecutor

    return {LocalExecutor: LocalConfig, RayDataExecutor: RayDataConfig,
            RayActorPoolExecutor: ActorPoolConfig, XennaExecutor: XennaConfig}


def test_docs_tables_are_the_dataclasses():
    shown = config_tables_in((ROOT / "docs/executors.md").read_text())
    assert set(shown) == {c.__name__ for c in CONFIG_CLASSES}, "a config class has no table"
    for cls in CONFIG_CLASSES:
        assert shown[cls.__name__] == config_table_markdown(cls), (
            f"docs/executors.md's {cls.__name__} table differs from the dataclass: regenerate "
            f"it with curator.executors.config.config_docs()")
        for f in dataclasses.fields(cls):  # every key documented in one line
            assert f.metadata.get("doc"), f"{cls.__name__}.{f.name} has no doc"


def test_a_table_changes_with_its_dataclass():
    @dataclasses.dataclass
    class Extra(LocalConfig):
        new_key: int = dataclasses.field(default=3, metadata={"doc": "a new knob"})

    table = config_table_markdown(Extra)
    assert "| `new_key` | `int` | `3` | a new knob |" in table
    assert "queue_size" not in table  # only the keys a class adds


def test_each_executor_takes_its_dataclass_and_the_keys_it_took_before():
    before = {  # the keys each executor knew before the dataclasses (none may be lost)
        "LocalExecutor": {"num_workers", "queue_size", "queue_bytes", "max_retries", "cpus",
                          "collect_outputs", "fuse_stages"},
        "RayDataExecutor": {"num_workers", "fuse_stages", "max_retries", "address", "num_cpus",
                            "num_gpus", "object_store_memory", "ray_timeout_s",
                            "gpu_memory_gb_per_gpu", "collect_outputs", "source_window",
                            "max_worker_restarts", "tasks_per_block", "max_workers",
                            "min_workers", "autoscale", "ignore_head_node"},
        "RayActorPoolExecutor": {"num_workers", "fuse_stages", "max_retries", "address",
                                 "num_cpus", "num_gpus", "object_store_memory", "ray_timeout_s",
                                 "gpu_memory_gb_per_gpu", "collect_outputs", "source_window",
                                 "setup_timeout_s", "ignore_head_node", "batches_in_flight",
                                 "max_workers", "min_workers", "autoscale", "scale_interval_s",
                                 "streaming"},
        "XennaExecutor": {"num_workers", "fuse_stages", "max_retries", "address", "num_cpus",
                          "num_gpus", "object_store_memory", "ray_timeout_s",
                          "gpu_memory_gb_per_gpu", "collect_outputs", "source_window",
                          "execution_mode", "logging_interval", "autoscale_interval_s",
                          "cpu_allocation_percentage", "log_worker_allocation_layout",
                          "actor_pool_verbosity_level", "monitoring_verbosity_level",
                          "autoscaler_verbosity_level", "executor_verbosity_level",
                          "tasks_per_block"},
    }
    for executor, cls in _executors().items():
        assert executor.config_class is cls
        assert before[executor.__name__] <= cls.keys(), executor.__name__
        assert isinstance(executor().cfg, cls)


def test_defaults_live_in_the_dataclass():
    from curator.executors.local import LocalExecutor
    from curator.executors.ray_actor_pool import RayActorPoolExecutor
    from curator.executors.ray_data import RayDataExecutor
    from curator.executors.xenna import XennaExecutor

    local = LocalExecutor().cfg
    assert (local.fuse_stages, local.queue_bytes, local.collect_outputs) == ("thread", 64 * 2**20,
                                                                             True)
    pool = RayActorPoolExecutor().cfg
    assert (pool.setup_timeout_s, pool.batches_in_flight, pool.scale_interval_s,
            pool.streaming, pool.fuse_stages, pool.ray_timeout_s) == (600.0, 2, 2.0, True, True,
                                                                      120.0)
    assert RayDataExecutor().cfg.max_worker_restarts == 4
    xenna = XennaExecutor().cfg  # NeMo Curator's defaults
    assert (xenna.execution_mode, xenna.logging_interval, xenna.autoscale_interval_s,
            xenna.cpu_allocation_percentage) == ("streaming", 60, 180, 0.95)
    assert XennaExecutor().setting("monitoring_verbosity_level") == "INFO"


def test_strings_are_converted_by_the_one_converter_dict_and_keywords_alike():
    from curator.executors.local import LocalExecutor
    from curator.executors.ray_data import RayDataExecutor
    from curator.executors.xenna import XennaExecutor

    assert LocalExecutor(num_workers="4").cfg.num_workers == 4
    assert LocalExecutor(num_workers="4").config["num_workers"] == 4  # the given keys, converted
    ex = RayDataExecutor(config={"max_workers": {"S": "3"}, "autoscale": "true"},
                         tasks_per_block="8")
    assert (ex.cfg.max_workers, ex.cfg.autoscale, ex.cfg.tasks_per_block) == ({"S": 3}, True, 8)
    assert ex.cfg.per_stage("max_workers", "S") == 3
    assert ex.cfg.per_stage("max_workers", "T") is None
    # NeMo's way: XennaExecutor(config={...}); keywords win over the dict
    xenna = XennaExecutor(config={"execution_mode": "batch", "logging_interval": "5"},
                          execution_mode="streaming")
    assert xenna.cfg.execution_mode == "streaming" and xenna.cfg.logging_interval == 5.0
    with pytest.raises(ConfigError, match=r"LocalExecutor: parameter 'num_workers'.*'many'"):
        LocalExecutor(num_workers="many")
    with pytest.raises(ConfigError, match=r"RayDataExecutor: parameter 'max_worker_restarts'"):
        RayDataExecutor(max_worker_restarts="often")


def test_unknown_keys_are_ignored_with_a_warning_naming_them():
    from curator.executors.local import LocalExecutor
    from curator.executors.xenna import XennaExecutor

    with pytest.warns(UserWarning, match=r"LocalExecutor: unknown config keys \['queue_sise'\]"):
        ex = LocalExecutor(queue_sise=3)
    assert not hasattr(ex.cfg, "queue_sise") and ex.cfg.queue_size is None
    # a key of another executor is unknown here, not an error (configs are shared)
    with pytest.warns(UserWarning, match=r"\['streaming'\] are ignored"):
        XennaExecutor(config={"streaming": False})


def test_values_a_type_cannot_rule_out_are_errors_naming_the_key():
    from curator.executors.local import LocalExecutor
    from curator.executors.xenna import XennaExecutor

    with pytest.raises(ValueError, match="fuse_stages must be False, True, 'process' or"):
        LocalExecutor(fuse_stages="fibre")
    with pytest.raises(ValueError, match="ignore_head_node is not supported by Xenna"):
        XennaExecutor(config={"ignore_head_node": True})
    assert XennaExecutor(config={"executor_verbosity_level": "debug"}).cfg  # any case


def test_no_executor_reads_its_config_with_literal_defaults():
    """Defaults live in the dataclasses only: no ``config.get(key, default)`` in the executors."""
    found = {p.name: n for p in EXECUTORS.glob("*.py")
             if (n := len(re.findall(r"config\.get\(|config\[\"", p.read_text())))}
    assert found == {}, found
