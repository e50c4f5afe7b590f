"""papercode benchmarks: a synthetic corpus generator (`generate`) and the load/latency benchmark (`run`)."""
