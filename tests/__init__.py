"""The tests, laid out as the package they test (`server/papercode/`): one folder a package, `product/` for what holds the
whole product (docs, architecture, budgets, real clients, packaging, the benchmarks' harnesses), `support/` for the
helpers every folder imports.
"""
