"""Development tools shipped with the package: the local upstream used by tests, benchmarks and the demo."""
