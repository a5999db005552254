"""si subpackage."""
