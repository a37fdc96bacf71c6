"""The chart on the cluster (what the chart suite's static checks cannot see): the tests of
chart/tests/test_chart_cluster.py, which `scripts/test-chart.sh --cluster` runs on its own, here in the
session, in their order, after the cluster and before the second cluster-up. They read the context from
LIVENESS_LAB_KUBE_CONTEXT and run helm and kubectl from PATH, both set by conftest.py (the tree's
.tools/bin first)."""

import importlib.util

import pytest

from . import kind

_spec = importlib.util.spec_from_file_location("test_chart_cluster", kind.REPO / "chart" / "tests" / "test_chart_cluster.py")
chart_cluster = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(chart_cluster)

pytestmark = pytest.mark.usefixtures("cluster")
# Collected here as this module's own tests, in the order they are written there.
globals().update({name: test for name, test in vars(chart_cluster).items() if name.startswith("test_") and callable(test)})
