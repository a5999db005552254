"""cas subpackage."""
