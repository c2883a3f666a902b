"""Helpers for testing stages and plugins: a contract check and a registry fixture.

The pytest fixture ``curator_registry`` is available in every test once curator-core is
installed (it is registered as a pytest plugin)."""

from curator.testing.contract import StageContractError, check_stage_contract
from curator.testing.registry_fixture import TestRegistry

__all__ = ["check_stage_contract", "StageContractError", "TestRegistry"]
