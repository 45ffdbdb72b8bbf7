"""Performance benchmarks (docs/product.md Budgets): `generate.py` writes the workloads, `run.py` measures."""
