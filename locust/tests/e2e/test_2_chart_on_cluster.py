"""The chart on the cluster (what the chart suite's static checks cannot see): `scripts/test-chart.sh --cluster`,
the chart's own on-cluster checks (chart/tests/test_chart_cluster.py: the API server accepts every object,
the restricted Pod Security Standard holds, every Deployment is rolled out, `helm test` passes), run as a
user runs them, here in the session after the cluster and before the second cluster-up."""

import pytest

from . import kind

pytestmark = pytest.mark.usefixtures("cluster")


def test_the_charts_own_checks_pass_on_the_installed_release(request):
    done = kind.run_streamed([kind.SCRIPTS / "test-chart.sh", "--cluster"], kind.logs_dir() / "e2e-chart-cluster.log", request.config, 900)
    assert done.returncode == 0, done.describe()
    assert " passed" in done.tail(5) and " failed" not in done.tail(5), done.describe()
