"""A package: test module names here repeat those of other test folders (test_model.py,
test_routes.py, test_needle.py, test_tables.py, named after the modules they test), which pytest
needs unique."""
