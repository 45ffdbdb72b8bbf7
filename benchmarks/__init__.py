"""Performance benchmarks (PRODUCT.md Budgets): `generate.py` writes the workloads, `run.py` measures."""
