"""The end-to-end suite on a real kind cluster (scripts/test-e2e.sh; see conftest.py).

A package, so that its conftest and helpers are ``e2e.conftest`` and ``e2e.kind`` and the tests of the
parent folder keep importing theirs as ``conftest``.
"""
