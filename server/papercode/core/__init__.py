"""Types and rules every layer shares: ids, errors, the record schema, orders, load reports, limits, cursors, scratch files."""
