"""The package version: the one place it is written (pyproject.toml reads it,
tests/test_image.py checks it against the top-level CMakeLists.txt)."""

__version__ = "0.1.0"
