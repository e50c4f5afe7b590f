"""Shared types every layer uses: identifiers, errors, the record schema, load reports, limits and cursors."""
