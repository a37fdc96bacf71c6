"""The registry suite (scripts/test-registry.sh): a package, so that its conftest is not the module
`conftest` the locust suite's tests import from."""
