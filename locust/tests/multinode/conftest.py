"""The multinode suite: a kind cluster of one control plane and two workers, the pod network between them,
two releases in two namespaces running their demos at once with the load from inside the cluster.

    scripts/test-multinode.sh [--keep] [-- CLUSTER-UP-ARGS...]      (what scripts/test.sh multinode runs)
    cd locust && ../.venv/bin/python -m pytest tests/multinode [--keep-cluster] [--cluster-up-arg=ARG]...

The e2e suite's session fixtures and hooks, reused (tests/e2e/conftest.py): cluster-up once before the
first test that needs the cluster (here with --workers 2 unless --cluster-up-arg names --workers),
cluster-down after the last one; a failing test carries the cluster's state; a failing cluster-up stops
the session; a session in which no test passed fails.
"""

from __future__ import annotations

import pytest
from e2e import conftest as e2e_conftest
from e2e.conftest import cluster, cluster_up, pytest_addoption, pytest_runtest_makereport, pytest_sessionfinish, pytest_terminal_summary

# The e2e suite's fixtures and hooks, which pytest finds here as this conftest's own.
__all__ = ["cluster", "cluster_up", "pytest_addoption", "pytest_runtest_makereport", "pytest_sessionfinish", "pytest_terminal_summary"]

WORKERS = 2


def pytest_configure(config):
    e2e_conftest.pytest_configure(config)
    args = config.option.cluster_up_arg
    if not any(a == "--workers" or a.startswith("--workers=") for a in args):
        args[:0] = ["--workers", str(WORKERS)]


@pytest.fixture(scope="session")
def suite_name() -> str:
    return "multinode"
