"""Tools around the tide package: cpp_extension (op packs built from Python), the tide-plugins
console script."""
