"""Tests of the whole product: the docs, ARCHITECTURE.md, answer budgets, the model's surface, packaging, the SDK
boundary, real MCP clients (`clients/`, the Node harness) and the benchmarks' harnesses.
"""
